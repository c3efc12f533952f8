'use strict';
// Preload (node -r bind-loopback.cjs ...) that keeps every TCP listener of a test peer on
// 127.0.0.1. Peers such as server-everything listen on all interfaces; tests must not.
const net = require('net');

const LOOPBACK = '127.0.0.1';
const originalListen = net.Server.prototype.listen;

function isPort(value) {
  return typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value));
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const first = args[0];
  if (args.length === 0 || typeof first === 'function') {
    args.unshift(0, LOOPBACK);                   // listen([cb]) -> random port
  } else if (isPort(first)) {
    if (typeof args[1] === 'string') args[1] = LOOPBACK;  // listen(port, host, ...)
    else args.splice(1, 0, LOOPBACK);            // listen(port[, backlog][, cb])
  } else if (first && typeof first === 'object' && first.path === undefined &&
             first.fd === undefined && first.handle === undefined && first._handle === undefined) {
    args[0] = Object.assign({}, first, { host: LOOPBACK });  // listen(options[, cb])
  }
  return originalListen.apply(this, args);
};
