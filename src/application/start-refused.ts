/** The start was refused to protect the data; the message says what happened and what to do. */
export class StartRefused extends Error {
  override name = 'StartRefused';
}
