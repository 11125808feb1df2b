import type { Readable } from 'node:stream';
import { invalidJson, payloadTooLarge } from './errors.js';

/** The bounds a document read as a stream is held to. */
export interface DocumentBounds {
  /** The whole body, in bytes. */
  totalBytes: number;
  /** One entry of a list, in characters. */
  entryChars: number;
  /** Entries of every list together. */
  entries: number;
}

type Document = Record<string, unknown>;

/** A top-level member's value other than the lists (format, position, at): small, read whole. */
const MEMBER_CHARS = 4096;

/**
 * Reads a JSON document of the export's shape (`{"format": …, "resources": {"tags": [{…}, …], …}}`)
 * as it arrives: each entry of each list is cut out of the text, held to `entryChars`, and parsed
 * alone; the first byte that cannot be such a document ends the read (400), and so does a body, an
 * entry or a count of entries past its bound (413). A body of junk costs what was read of it, not
 * what was sent; no value of the document is ever larger than its bounds.
 */
export function readDocument(stream: Readable, bounds: DocumentBounds): Promise<Document> {
  const reader = new DocumentReader(bounds);
  const decoder = new TextDecoder('utf-8');
  let bytes = 0;
  return new Promise((resolve, reject) => {
    const stop = (error: unknown) => {
      stream.off('data', onData).off('end', onEnd).off('error', stop);
      stream.pause(); // the rest is not read: the answer closes the connection
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      try {
        bytes += chunk.length;
        if (bytes > bounds.totalBytes) throw payloadTooLarge(bounds.totalBytes);
        reader.feed(decoder.decode(chunk, { stream: true }));
      } catch (error) {
        stop(error);
      }
    };
    const onEnd = () => {
      try {
        reader.feed(decoder.decode());
        resolve(reader.end());
      } catch (error) {
        reject(error);
      }
    };
    stream.on('data', onData).once('end', onEnd).once('error', stop);
  });
}

/** Where the reader is in the document. */
type Place =
  | 'start'
  | 'member' // before a top-level key, or the end
  | 'memberColon'
  | 'memberValue'
  | 'afterMember'
  | 'resources' // before a resource name, or the end of `resources`
  | 'listColon'
  | 'listStart'
  | 'entry' // before an entry, or the end of the list
  | 'afterEntry'
  | 'afterList'
  | 'done';

const isSpace = (c: string) => c === ' ' || c === '\n' || c === '\r' || c === '\t';

class DocumentReader {
  private place: Place = 'start';
  private readonly document: Document = {};
  private readonly lists: Record<string, unknown[]> = {};
  private key = '';
  private afterComma = false;
  private sawResources = false;
  /** A value being cut out: its text so far, its depth, and whether inside a string (and after a backslash). */
  private value = new ValueCut();
  private entries = 0;
  private read = 0;

  constructor(private readonly bounds: DocumentBounds) {}

  feed(text: string): void {
    for (let i = 0; i < text.length; i++, this.read++) this.step(text[i]);
  }

  end(): Document {
    if (this.place !== 'done') throw invalidJson('the document ends before it is whole');
    return this.sawResources ? { ...this.document, resources: this.lists } : this.document;
  }

  private fail(what: string): never {
    throw invalidJson(`not an export document at character ${this.read}: ${what}`);
  }

  private step(c: string): void {
    if (this.value.active) this.cut(c);
    else if (!isSpace(c)) this.structure(c);
  }

  /** A character between values: it must be the next piece of the document's structure. */
  private structure(c: string) {
    switch (this.place) {
      case 'start':
        if (c !== '{') this.fail('it must be a JSON object');
        return this.go('member');
      case 'member':
      case 'resources':
        if (c === '}' && !this.afterComma) return this.go(this.place === 'member' ? 'done' : 'afterMember');
        if (c !== '"') this.fail('a member name was expected');
        this.afterComma = false;
        return this.value.start(c, 200);
      case 'memberColon':
      case 'listColon':
        if (c !== ':') this.fail('":" expected');
        return this.go(this.place === 'memberColon' ? 'memberValue' : 'listStart');
      case 'memberValue':
        // Anything but an object is kept as a small value: the document's reader says what is wrong with it.
        if (this.key === 'resources' && c === '{') {
          this.sawResources = true;
          return this.go('resources');
        }
        return this.value.start(c, MEMBER_CHARS);
      case 'listStart':
        if (c !== '[') this.fail(`resources.${this.key} must be a list`);
        return this.go('entry');
      case 'entry':
        if (c === ']' && !this.afterComma) return this.go('afterList');
        this.afterComma = false;
        return this.value.start(c, this.bounds.entryChars);
      case 'afterEntry':
        if (c === ',') return this.go('entry', true);
        if (c !== ']') this.fail('"," or "]" expected');
        return this.go('afterList');
      case 'afterList':
      case 'afterMember':
        if (c === ',') return this.go(this.place === 'afterList' ? 'resources' : 'member', true);
        if (c !== '}') this.fail('"," or "}" expected');
        return this.go(this.place === 'afterList' ? 'afterMember' : 'done');
      default:
        this.fail('nothing may follow the document');
    }
  }

  /** `afterComma`: a value must come next (a trailing comma is not JSON). */
  private go(place: Place, afterComma = false): void {
    this.afterComma = afterComma;
    this.place = place;
  }

  /** One more character of the value being cut out; once it is whole, where it goes. */
  private cut(c: string): void {
    const whole = this.value.add(c, () => this.tooLarge());
    if (whole === undefined) return;
    const parsed = this.parse(whole.text);
    this.place = this.placed(parsed);
    if (whole.next !== undefined) this.step(whole.next);
  }

  private tooLarge(): never {
    if (this.place === 'entry') {
      throw payloadTooLarge(0, `an entry of resources.${this.key} is over ${this.bounds.entryChars} characters`);
    }
    return this.fail('a member name or value is too long');
  }

  private parse(text: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      return this.fail('a value is not valid JSON');
    }
  }

  /** Keeps a whole value: a member name, a member's value, a resource name, or an entry. */
  private placed(parsed: unknown): Place {
    switch (this.place) {
      case 'member':
        this.key = parsed as string;
        return 'memberColon';
      case 'resources':
        this.key = parsed as string;
        if (Object.hasOwn(this.lists, this.key)) this.fail(`resources.${this.key} is given twice`);
        this.lists[this.key] = [];
        return 'listColon';
      case 'memberValue':
        this.document[this.key] = parsed;
        return 'afterMember';
      default:
        if (++this.entries > this.bounds.entries) throw payloadTooLarge(0, `over ${this.bounds.entries} entries`);
        this.lists[this.key].push(parsed);
        return 'afterEntry';
    }
  }
}

/** A JSON value cut out of the text a character at a time: a string, an object, an array or a scalar. */
class ValueCut {
  active = false;
  private text = '';
  private limit = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scalar = false;

  start(c: string, limit: number): void {
    Object.assign(this, { active: true, text: '', limit, depth: 0, inString: false, escaped: false, scalar: false });
    if (c === '"') this.inString = true;
    else if (c === '{' || c === '[') this.depth = 1;
    else this.scalar = true;
    this.text = c;
  }

  /** The value once whole (and, for a scalar, the character that ended it, not part of it). */
  add(c: string, tooLarge: () => never): { text: string; next?: string } | undefined {
    if (this.scalar && (c === ',' || c === '}' || c === ']' || c === ':' || isSpace(c))) {
      this.active = false;
      return { text: this.text, next: c };
    }
    if (this.text.length >= this.limit) tooLarge();
    this.text += c;
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === '\\') this.escaped = true;
      else if (c === '"') this.inString = false;
    } else if (c === '"') this.inString = true;
    else if (c === '{' || c === '[') this.depth++;
    else if (c === '}' || c === ']') this.depth--;
    if (this.scalar || this.inString || this.depth > 0) return undefined;
    this.active = false;
    return { text: this.text };
  }
}
