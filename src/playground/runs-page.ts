/**
 * The playground's runs page (`GET /playground/runs`, docs/agent-runs.md): recent executions, and for the one picked
 * its steps as they stream (the run events route, read with fetch so the key goes in a header), a paused run's
 * question with Approve / Reject with a reason / Edit the arguments, and the answer and usage when it ends. One
 * self-contained page like the playground: no build step, no network beyond this server.
 */
export const RUNS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Prism runs</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5rem;max-width:1100px;color:#222}
section{border:1px solid #ddd;border-radius:6px;padding:1rem;margin:1rem 0}
.cols{display:flex;gap:1rem;align-items:flex-start}
#list{min-width:320px;list-style:none;padding:0;margin:0}
#list li{cursor:pointer;padding:.3rem;border-bottom:1px solid #eee}
#list li:hover{background:#f3f3ff}
#steps{list-style:none;padding:0;margin:0;flex:1}
#steps li{border-left:3px solid #99c;padding:.2rem .5rem;margin:.3rem 0;white-space:pre-wrap;font-family:monospace}
#steps li.error{border-color:#e33}
#pause{display:none;background:#fff8e0;border:1px solid #e0c060;padding:.5rem;margin:.5rem 0}
textarea{width:100%;font-family:monospace}
input,button{font:inherit;margin:.2rem}
</style></head><body>
<h1>Prism runs</h1>
<p><a href="/playground">&larr; playground</a></p>
<p><label>API key <input id="key" type="password" size="44" placeholder="owner key or an OAuth access token"></label>
<button id="load">Load recent runs</button> <span id="status"></span></p>
<div class="cols">
<section><h2>Recent</h2><ul id="list"></ul></section>
<section style="flex:1"><h2 id="title">Run</h2>
<div id="pause"><b>Waiting for a person:</b> <span id="question"></span>
<div><button id="approve">Approve</button>
<input id="reason" size="40" placeholder="reason"> <button id="reject">Reject</button></div>
<div><textarea id="args" rows="4"></textarea><button id="edit">Edit and run</button></div></div>
<ul id="steps"></ul>
<pre id="answer"></pre></section>
</div>
<script>
const $ = (id) => document.getElementById(id);
const auth = () => ({ authorization: 'Bearer ' + $('key').value.trim() });
let current = null;
let reader = null;
async function api(path, init = {}) {
  const res = await fetch(path, { ...init, headers: { ...auth(), ...(init.headers || {}) } });
  const body = await res.json();
  if (!res.ok) throw new Error(res.status + ' ' + JSON.stringify(body));
  return body;
}
const line = (text, error) => {
  const li = document.createElement('li');
  li.textContent = text;
  if (error) li.className = 'error';
  $('steps').appendChild(li);
};
async function load() {
  $('status').textContent = 'loading';
  try {
    const runs = await api('/v1/agent/executions?limit=20');
    $('list').innerHTML = '';
    for (const run of runs) {
      const li = document.createElement('li');
      li.dataset.id = run.id;
      li.textContent = run.status + '  ' + (run.name || run.id).slice(0, 50);
      li.onclick = () => follow(run.id);
      $('list').appendChild(li);
    }
    $('status').textContent = runs.length + ' runs';
  } catch (error) { $('status').textContent = String(error.message); }
}
function show(event) {
  switch (event.type) {
    case 'execution.status':
      $('status').textContent = event.status;
      if (event.status === 'paused' && event.pause) showPause(event.pause);
      break;
    case 'execution.plan': line('plan  ' + event.model + (event.goal ? '  goal ' + event.goal : '')); break;
    case 'execution.tool_call': line('tool  ' + event.name + '  ' + JSON.stringify(event.arguments)); break;
    case 'execution.tool_result':
      line('  -> ' + (event.error ? 'error: ' + event.error : (event.summary || 'ok')), Boolean(event.error));
      break;
    case 'execution.answer': $('answer').textContent = event.text || JSON.stringify(event.response, null, 2); break;
    case 'execution.usage': line('usage  ' + JSON.stringify(event.usage)); break;
    case 'execution.done': $('status').textContent = event.execution.status; break;
  }
}
function showPause(pause) {
  $('pause').style.display = 'block';
  $('question').textContent = pause.question || ('call ' + pause.tool_call.name + ' ' + JSON.stringify(pause.tool_call.arguments));
  $('args').value = pause.tool_call ? JSON.stringify(pause.tool_call.arguments, null, 2) : '';
}
async function follow(id) {
  if (reader) { try { await reader.cancel(); } catch {} }
  current = id;
  $('title').textContent = 'Run ' + id;
  $('steps').innerHTML = '';
  $('answer').textContent = '';
  $('pause').style.display = 'none';
  const res = await fetch('/v1/agent/executions/' + id + '/events', { headers: { ...auth(), accept: 'text/event-stream' } });
  if (!res.ok) { $('status').textContent = res.status + ' ' + (await res.text()); return; }
  reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done || current !== id) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\\n\\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = frame.split('\\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\\n');
      if (data) show(JSON.parse(data));
    }
  }
}
async function decide(body) {
  const id = current;
  $('pause').style.display = 'none';
  $('status').textContent = 'resuming';
  try {
    const done = await api('/v1/agent/executions/' + id + '/resume', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    $('status').textContent = done.status;
    await follow(id);
  } catch (error) { $('status').textContent = String(error.message); }
}
$('load').onclick = load;
$('approve').onclick = () => decide({ action: 'approve' });
$('reject').onclick = () => decide({ action: 'reject', reason: $('reason').value });
$('edit').onclick = () => decide({ action: 'edit', arguments: JSON.parse($('args').value || '{}') });
</script></body></html>
`;
