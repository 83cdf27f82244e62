/**
 * `PRISM_BLOB_URL` parsing, apart from the S3 store so the configuration can check the URL without loading the AWS
 * SDK (which a default install, on the local folder, never loads).
 */

/** Where the bucket is and how to reach it (parsed from `PRISM_BLOB_URL`, see parseS3BlobUrl). */
export interface S3Location {
  bucket: string;
  /** Key prefix, empty or ending in `/`. */
  prefix: string;
  /** Custom endpoint for S3-compatible servers; unset for AWS. */
  endpoint: string | undefined;
  region: string;
  /** Bucket in the path (`http://host/bucket/key`), which MinIO and most self-hosted servers need. */
  forcePathStyle: boolean;
}

/**
 * Parses `s3://bucket[/prefix]?endpoint=http://host:port&region=…&path_style=true|false`.
 * Path-style addressing is the default when an endpoint is given (self-hosted servers), virtual-hosted otherwise.
 * @throws Error naming what is wrong.
 */
export function parseS3BlobUrl(value: string, defaultRegion = 'us-east-1'): S3Location {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error('must be a URL like s3://bucket?endpoint=http://host:9000');
  }
  if (url.protocol !== 's3:') throw new Error('only s3:// URLs are supported');
  const bucket = url.hostname;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new Error(`"${bucket}" is not a valid bucket name`);
  const rawPrefix = decodeURIComponent(url.pathname).replace(/^\/+/, '');
  const prefix = rawPrefix === '' || rawPrefix.endsWith('/') ? rawPrefix : `${rawPrefix}/`;
  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/]+/.test(endpoint)) {
    throw new Error('endpoint must be an http(s) URL');
  }
  const pathStyle = url.searchParams.get('path_style');
  if (pathStyle !== null && pathStyle !== 'true' && pathStyle !== 'false') {
    throw new Error('path_style must be true or false');
  }
  return {
    bucket,
    prefix,
    endpoint,
    region: url.searchParams.get('region') ?? defaultRegion,
    forcePathStyle: pathStyle === null ? endpoint !== undefined : pathStyle === 'true',
  };
}
