// What the drivers of the TypeScript SDK clients share (ts_v1_client.mjs, ts_v2_client.mjs;
// tests/interop/driver_report.py reads their reports). Test-only.

// Records every message a transport sends and receives, in order, into `wire` as
// {sent: message} or {received: message}: the SDK's send is wrapped, and so is whatever handler
// it installs as onmessage (set again on each connect; null when it lets go).
export function tapped(transport, wire) {
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    wire.push({ sent: message });
    return send(message, options);
  };
  let receive;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => receive,
    set: (handler) => {
      receive =
        handler &&
        ((message, extra) => {
          wire.push({ received: message });
          handler(message, extra);
        });
    },
  });
  return transport;
}

// The plan's answer to a question: `answers` is keyed by the question's message (a question asked
// again after an invalid answer adds the reason after a blank line); a list under one message
// gives one answer per time it is asked.
export function scriptedAnswer(answers, params) {
  const scripted = answers[params.message.split("\n\n")[0]];
  const answer = Array.isArray(scripted) ? scripted.shift() : scripted;
  if (answer === undefined) throw new Error(`no scripted answer for ${JSON.stringify(params)}`);
  return answer;
}
