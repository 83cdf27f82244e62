/**
 * The playground page (`GET /playground`): one self-contained HTML page, no build step and no network beyond this
 * server. Drop an image or PDF and pick a hub domain or a skill to see the JSON and the fields outlined on the
 * image; chat with any model, streamed; browse skills and executions. Without a key it runs as a guest through
 * the gateway (`prism-1`, within the guest cap); with a key, on the main API.
 */
import { chatErrorText, defaultChatModel } from './playground-chat';

export const PLAYGROUND_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Prism playground</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5rem;max-width:1100px;color:#222}
section{border:1px solid #ddd;border-radius:6px;padding:1rem;margin:1rem 0}
#drop{border:2px dashed #aaa;padding:1rem;text-align:center;margin:.5rem 0}
#drop.over{background:#eef}
.out{display:flex;gap:1rem;align-items:flex-start}
#page{position:relative;display:inline-block;max-width:50%}
#page img{max-width:100%;display:block}
.box{position:absolute;border:2px solid #e33;box-sizing:border-box}
pre{background:#f6f6f6;padding:.5rem;overflow:auto;max-height:420px;flex:1;white-space:pre-wrap}
input,select,button{font:inherit;margin:.2rem}
</style></head><body>
<h1>Prism playground</h1>
<p><a id="runs-link" href="/playground/runs">Agent runs: watch and approve &rarr;</a></p>
<p><label>API key <input id="key" type="password" size="44" placeholder="empty: guest (gateway, guest cap)"></label>
<span id="who"></span></p>
<section><h2>Extract</h2>
<div id="drop">Drop an image or PDF here, or <input id="file" type="file" accept="image/*,application/pdf"></div>
<label>Domain or skill <select id="target"></select></label> <button id="run">Extract</button> <span id="status"></span>
<div class="out"><div id="page"><img id="preview" alt=""></div><pre id="json"></pre></div>
</section>
<section><h2>Chat</h2>
<select id="model"></select> <input id="prompt" size="60" value="Write a haiku about receipts" placeholder="a message for the model"> <button id="send">Send</button>
<pre id="reply"></pre></section>
<section><h2>Skills and executions</h2><button id="browse">Load</button>
<div class="out"><ul id="skills"></ul><ul id="executions"></ul></div></section>
<script>
${defaultChatModel.toString()}
${chatErrorText.toString()}
const $ = (id) => document.getElementById(id);
const key = () => $('key').value.trim();
const auth = () => (key() ? { authorization: 'Bearer ' + key() } : {});
let file = null;
async function api(path, init = {}) {
  const res = await fetch(path, { ...init, headers: { ...auth(), ...(init.headers || {}) } });
  const text = await res.text();
  const body = text ? JSON.parse(text) : null;
  if (!res.ok) throw new Error(res.status + ' ' + JSON.stringify(body));
  return body;
}
const json = (body) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const dataUrl = (f) => new Promise((ok, fail) => { const r = new FileReader(); r.onload = () => ok(r.result); r.onerror = fail; r.readAsDataURL(f); });
function pick(f) {
  file = f;
  $('json').textContent = '';
  $('preview').src = f.type.startsWith('image/') ? URL.createObjectURL(f) : '';
  drawBoxes({});
}
$('file').onchange = (e) => e.target.files[0] && pick(e.target.files[0]);
$('drop').ondragover = (e) => { e.preventDefault(); $('drop').classList.add('over'); };
$('drop').ondragleave = () => $('drop').classList.remove('over');
$('drop').ondrop = (e) => { e.preventDefault(); $('drop').classList.remove('over'); if (e.dataTransfer.files[0]) pick(e.dataTransfer.files[0]); };
function drawBoxes(result) {
  document.querySelectorAll('.box').forEach((b) => b.remove());
  const walk = (value) => {
    if (!value || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value)) {
      if (k.endsWith('_metadata') && v && Array.isArray(v.bboxes)) {
        for (const b of v.bboxes) {
          const [x, y, w, h] = b.bbox.xywh;
          const d = document.createElement('div');
          d.className = 'box';
          d.title = k.slice(0, -9);
          Object.assign(d.style, { left: x * 100 + '%', top: y * 100 + '%', width: w * 100 + '%', height: h * 100 + '%' });
          $('page').appendChild(d);
        }
      } else walk(v);
    }
  };
  walk(result);
}
async function extract() {
  if (!file) return ($('status').textContent = 'pick a file first');
  const [kind, name] = $('target').value.split(':');
  $('status').textContent = 'extracting…';
  try {
    let result;
    const image = file.type.startsWith('image/');
    if (!key()) {
      const schema = kind === 'domain' ? (await api('/v1/hub/schema', json({ domain: name }))).json_schema : undefined;
      const body = { model: 'prism-1', method: 'extract', method_params: { grounding: true },
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: await dataUrl(file) } }] }],
        ...(schema ? { response_format: { type: 'json_schema', json_schema: { name: 'extraction', schema } } } : {}) };
      const reply = await api('/v1/compat/chat/completions', json(body));
      const answer = JSON.parse(reply.choices[0].message.content);
      result = answer.content ?? answer; // prism-1 wraps the fields with what it read (model, method, image size)
    } else {
      const target = kind === 'domain' ? { domain: name } : { config: { skills: [{ type: 'skill_reference', skill_id: name, skill_version: 'latest' }] } };
      const config = { ...(target.config || {}), grounding: true };
      let prediction;
      if (image) prediction = await api('/v1/image/generate', json({ ...target, config, images: [await dataUrl(file)] }));
      else {
        const form = new FormData();
        form.append('file', file);
        const uploaded = await api('/v1/files?purpose=assistants', { method: 'POST', body: form });
        prediction = await api('/v1/document/generate', json({ ...target, config, file_id: uploaded.id, batch: false }));
      }
      result = prediction.response;
    }
    $('json').textContent = JSON.stringify(result, null, 2);
    if (image) drawBoxes(result);
    $('status').textContent = 'done';
  } catch (e) { $('status').textContent = String(e.message || e); }
}
$('run').onclick = extract;
async function chat() {
  $('reply').textContent = '';
  const res = await fetch('/v1/compat/chat/completions', { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' },
    body: JSON.stringify({ model: $('model').value, stream: true, messages: [{ role: 'user', content: $('prompt').value }] }) });
  if (!res.ok) return ($('reply').textContent = chatErrorText(res.status, await res.text()));
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\\n\\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split('\\n')) {
        if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
        const chunk = JSON.parse(line.slice(6));
        $('reply').textContent += (chunk.choices && chunk.choices[0] && chunk.choices[0].delta.content) || '';
      }
    }
  }
}
$('send').onclick = chat;
async function browse() {
  const skills = await api('/v1/skills?grouped=true');
  $('skills').innerHTML = '';
  for (const s of skills) { const li = document.createElement('li'); li.textContent = 'skill ' + s.name + ' ' + s.skill_version; $('skills').appendChild(li); }
  $('executions').innerHTML = '';
  if (key()) for (const e of await api('/v1/agent/executions')) { const li = document.createElement('li'); li.textContent = 'execution ' + e.id + ' ' + e.status; $('executions').appendChild(li); }
}
$('browse').onclick = () => browse().catch((e) => ($('executions').textContent = String(e.message || e)));
async function start() {
  const domains = await api('/v1/hub/domains');
  const skills = await api('/v1/skills?grouped=true');
  $('target').innerHTML = domains.map((d) => '<option value="domain:' + d.domain + '">' + d.domain + '</option>').join('') +
    skills.map((s) => '<option value="skill:' + s.name + '">skill: ' + s.name + '</option>').join('');
  $('target').value = 'domain:document.receipt';
  const models = await api('/v1/compat/models');
  $('model').innerHTML = models.data.map((m) => '<option>' + m.id + '</option>').join('');
  $('model').value = defaultChatModel(models.data);
}
$('key').value = localStorage.getItem('prism-key') || '';
$('key').onchange = () => localStorage.setItem('prism-key', key());
start().catch((e) => ($('status').textContent = String(e.message || e)));
</script></body></html>
`;
