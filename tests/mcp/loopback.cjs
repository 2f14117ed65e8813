// Preloaded (`node --require loopback.cjs …`) into a server that would listen on every
// interface, such as server-everything's HTTP mode: it listens on 127.0.0.1 only, and
// says on stderr which port it got, so a test can ask for port 0 and learn the port.
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    const port = Number(args[0]);
    const rest = args.slice(1).filter((a) => typeof a === "function");
    return listen.call(this, { port, host: "127.0.0.1" }, ...rest);
  }
  return listen.apply(this, args);
};

const emit = net.Server.prototype.emit;
net.Server.prototype.emit = function (event, ...args) {
  if (event === "listening") {
    process.stderr.write(`listening on 127.0.0.1:${this.address().port}\n`);
  }
  return emit.call(this, event, ...args);
};
