using S = import "s.capnp";
const c :Config = (services = [(name = "a", worker = S.w)]);
const w :Worker = (modules = [(name = "a.js", esModule = embed "a.js")], durableObjectNamespaces = [(className = "C", uniqueKey = "k")]);
