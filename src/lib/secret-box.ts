/**
 * Secrets Prism must use again later (an MCP server's API key, its OAuth tokens) are kept encrypted at rest, with a
 * key that lives in the environment (PRISM_SECRETS_KEY) and never in the database: a copy of the database alone
 * reveals nothing. AES-256-GCM with a random 96-bit nonce per secret; the `context` (e.g. the record's id) is bound
 * as additional authenticated data, so a ciphertext moved onto another record does not decrypt.
 *
 * Stored form: `v1.<base64 nonce>.<base64 tag>.<base64 ciphertext>`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface SecretBox {
  seal(plaintext: string, context: string): string;
  /** @throws Error when the text was not sealed with this key and context. */
  open(sealed: string, context: string): string;
}

/** Reads the key as 64 hex digits or the base64 of 32 bytes; null when it is neither. */
export function parseSecretsKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  const decoded = Buffer.from(trimmed, 'base64');
  return decoded.length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) ? decoded : null;
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('the secrets key must be 32 bytes');
  return {
    seal(plaintext, context) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return ['v1', nonce.toString('base64'), tag.toString('base64'), body.toString('base64')].join('.');
    },
    open(sealed, context) {
      const [version, nonce, tag, body] = sealed.split('.');
      if (version !== 'v1' || nonce === undefined || tag === undefined || body === undefined) {
        throw new Error('not a sealed secret');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}
