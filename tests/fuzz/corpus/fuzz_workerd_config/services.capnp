using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "alpha", worker = .alphaWorker),
    (name = "counter", worker = .counterWorker),
    (name = "alloc", worker = (
      modules = [ (name = "index.js", esModule = embed "alloc/index.js") ],
      compatibilityDate = "2024-01-01",
    )),
  ],
  sockets = [
    (name = "a", address = "127.0.0.1:35001", http = (), service = "alpha"),
    (name = "c", address = "127.0.0.1:35002", http = (), service = "counter"),
    (name = "l", address = "127.0.0.1:35003", http = (), service = "alloc"),
  ],
  v8Flags = [ "--perf-basic-prof", "--interpreted-frames-native-stack", "--log-code",
    "--log-source-code", "--logfile-per-isolate", "--logfile=/var/log/v8/v8.log" ],
);

const alphaWorker :Workerd.Worker = (
  modules = [ (name = "index.js", esModule = embed "alpha/index.js") ],
  compatibilityDate = "2024-01-01",
);

const counterWorker :Workerd.Worker = (
  modules = [ (name = "index.js", esModule = embed "counter/index.js") ],
  compatibilityDate = "2024-01-01",
  durableObjectNamespaces = [ (className = "Counter", uniqueKey = "counter-ns-7f3a") ],
  durableObjectStorage = (inMemory = void),
  bindings = [ (name = "COUNTER", durableObjectNamespace = "Counter") ],
);
