/** Fields whose values are sealed before they reach an event, and never shown. */
export const SECRET_FIELDS = ['passwd', 'private_key'] as const;
export const REDACTED = '[redacted]';

/** Encrypts and decrypts secret values; the only place that sees both the key and the plain text. */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}
