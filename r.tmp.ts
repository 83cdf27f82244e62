import { loadConfig } from './src/config/config';
import { createContainer } from './src/container';
import { createApp } from './src/app';
import { mountedRoutes } from './src/http/mounted-routes';
import fs from 'node:fs';
void (async () => {
  const dir = fs.mkdtempSync('/tmp/prism-r-');
  const c = await createContainer(loadConfig({ PRISM_DATA_DIR: dir, PRISM_LOG_LEVEL: 'silent' }));
  const routes = mountedRoutes(createApp(c));
  for (const r of routes) console.log(r.method, r.path);
  await c.close();
})();
