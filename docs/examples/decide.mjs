/**
 * A complete decision-stream client: node decide.mjs http://127.0.0.1:8080 frames/*.jpg
 * (PRISM_KEY optional: anonymous without it). It sends the frames at 30 a second, prints every decision, and closes
 * the session once each frame has its reply. docs/decisions.md runs it.
 */
import fs from 'node:fs';
import WebSocket from 'ws';

const [base, ...files] = process.argv.slice(2);
const headers = process.env.PRISM_KEY ? { authorization: `Bearer ${process.env.PRISM_KEY}` } : {};
const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/compat/decisions/stream`, { headers });
ws.on('unexpected-response', (_req, res) => {
  console.error(`refused: HTTP ${res.statusCode}`);
  process.exit(1);
});

const pending = new Set(); // frames sent and not yet answered
let sent = 0;
const answered = (seq) => {
  pending.delete(seq);
  if (sent === files.length && pending.size === 0) ws.send(JSON.stringify({ type: 'session.close' }));
};

ws.on('open', () =>
  ws.send(
    JSON.stringify({
      type: 'session.create',
      questions: [
        { id: 'has_text', question: 'Is there text?', type: 'boolean' },
        { id: 'exit_sign', question: 'Does the text contain "EXIT"?', type: 'boolean' },
        { id: 'light', question: 'What is the brightness level?', type: 'enum', options: ['dark', 'dim', 'bright'] },
        { id: 'motion', question: 'How much changed since the previous frame?', type: 'number' },
      ],
    }),
  ),
);

ws.on('message', (data) => {
  const event = JSON.parse(data.toString());
  switch (event.type) {
    case 'session.created': {
      console.log('session', event.session.id, event.session.questions);
      const timer = setInterval(() => {
        if (sent === files.length) return clearInterval(timer);
        ws.send(fs.readFileSync(files[sent]), { binary: true });
        pending.add(++sent); // the server numbers frames the same way: 1, 2, …
      }, 1000 / 30);
      break;
    }
    case 'decision':
      console.log(`#${event.seq}`, event.answers, `${event.latency_ms} ms`, `$${event.usage.cost}`);
      answered(event.seq);
      break;
    case 'frame.dropped':
      console.log(`#${event.seq} dropped (${event.reason})`);
      answered(event.seq);
      break;
    case 'error':
      console.error(event.seq ? `#${event.seq}` : 'error', event.error.code ?? event.error.type, event.error.message);
      if (event.seq) answered(event.seq);
      else ws.close(); // the question set was refused: there is no session
      break;
    case 'session.closed':
      console.log('closed', event.reason, event.frames);
      break;
  }
});
ws.on('close', (code) => process.exit(code === 1000 ? 0 : 1));
