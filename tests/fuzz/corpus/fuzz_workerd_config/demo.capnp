# The isoprof demo: two workers with different hot functions, V8 writing a
# perf map (--perf-basic-prof, interpreted frames on the native stack) and a
# per-isolate code log.  scripts/demo.sh fills in @LOGDIR@ and the ports.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "alpha", worker = .alphaWorker),
    (name = "beta", worker = .betaWorker),
  ],
  sockets = [
    (name = "http-alpha", address = "127.0.0.1:@PORT_ALPHA@", http = (), service = "alpha"),
    (name = "http-beta", address = "127.0.0.1:@PORT_BETA@", http = (), service = "beta"),
  ],
  v8Flags = [
    "--perf-basic-prof",
    "--interpreted-frames-native-stack",
    "--log-code",
    "--log-source-code",
    "--logfile-per-isolate",
    "--logfile=@LOGDIR@/v8.log",
  ],
);

const alphaWorker :Workerd.Worker = (
  modules = [ (name = "alpha.js", esModule = embed "alpha.js") ],
  compatibilityDate = "2024-01-01",
);

const betaWorker :Workerd.Worker = (
  modules = [ (name = "beta.js", esModule = embed "beta.js") ],
  compatibilityDate = "2024-01-01",
);
