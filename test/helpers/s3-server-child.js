// An s3rver in a process of its own (test/helpers/s3-server.ts, startS3ServerProcess): a test that blocks its own
// event loop (spawnSync of the CLI, which reads the same bucket) must not block the S3 server too.
// argv: <folder> <bucket>. Prints the port on its first line, then serves until SIGTERM.
'use strict';
const S3rver = require('s3rver');

const [folder, bucket] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory: folder,
  configureBuckets: [{ name: bucket, configs: [] }],
});
server.run().then(
  (address) => process.stdout.write(`${address.port}\n`),
  (error) => {
    process.stderr.write(`s3rver did not start: ${String(error)}\n`);
    process.exit(1);
  },
);
process.on('SIGTERM', () => {
  server.close().finally(() => process.exit(0));
});
