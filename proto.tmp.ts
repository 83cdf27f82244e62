import { makeTextPdf } from './test/helpers/media-fixtures';
import { startTestApp, call, uploadFile } from './test/helpers/test-app';
async function main() {
  const app = await startTestApp({ PRISM_LOG_LEVEL: 'error' });
  const key = await app.createKey('a','pro');
  const s = await call(`${app.url}/v1/skills/create`, { key, json: { prompt: 'Read payment status.', json_schema: {type:'object',properties:{payment_status:{type:'string'}}}, name: 'payment-notes' } });
  console.log(s.status, await s.text());
  const pdf = await makeTextPdf([['Invoice Number: INV-1001', 'Payment Status: PAID by card on 2024-03-01']]);
  const up = await (await uploadFile(app.url, key, pdf, {filename:'a.pdf'})).json() as {id:string};
  const r = await call(`${app.url}/v1/document/generate`, {key, json:{file_id: up.id, model:'prism-1', config:{skills:[{skill_name:'payment-notes'}]}}});
  console.log(r.status, await r.text());
  await app.close();
}
main();
