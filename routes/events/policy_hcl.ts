// The HCL front end of the policy language: a scanner and parser that accept what HashiCorp's HCL v1 (the
// v1.0.1-nomad-1 fork Nomad pins) accepts, with its error texts and positions, producing the tree of
// policy_ast.ts. Written for wharf from the behaviour of that library; notable behaviours it keeps:
// attributes may be separated by commas, `key = value` at the end of input may lack its value, a list may
// hold a nested list without a comma after it, and an error inside a block that ends at `}` is forgiven.

import {
  GoPanic,
  LimitError,
  type ListType,
  type LiteralType,
  type Node,
  type ObjectItem,
  type ObjectList,
  type ObjectType,
  type Pos,
  PosError,
  type Token,
  type TokenType,
} from "./policy_ast.ts";

/** Deeper nesting than this is refused (HCL itself has no limit; a JavaScript stack does). */
export const maxNesting = 200;

/** The one-rune tokens HCL and JSON share. */
export const punctuation: ReadonlyMap<string, TokenType> = new Map([
  ["[", "LBRACK"],
  ["]", "RBRACK"],
  ["{", "LBRACE"],
  ["}", "RBRACE"],
  [",", "COMMA"],
]);

const EOF_RUNE = "";

function isLetter(ch: string): boolean {
  if (ch === "") return false;
  const c = ch.charCodeAt(0);
  if (c < 0x80) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
  return /^\p{L}$/u.test(ch);
}

function isDigit(ch: string): boolean {
  if (ch === "") return false;
  const c = ch.charCodeAt(0);
  if (c < 0x80) return c >= 48 && c <= 57;
  return /^\p{Nd}$/u.test(ch);
}

function isDecimal(ch: string): boolean {
  return ch.length === 1 && ch >= "0" && ch <= "9";
}

function digitVal(ch: string): number {
  if (ch.length !== 1) return 16;
  const c = ch.charCodeAt(0);
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return 16;
}

/**
 * A rune reader with the position bookkeeping of HCL's scanners (column counts runes, a newline moves to the
 * next line at column 0, one rune can be pushed back). Shared by the HCL and JSON scanners.
 */
export class RuneReader {
  line = 1;
  column = 0;
  offset = 0;
  #prevLine = 1;
  #prevColumn = 0;
  #prevOffset = 0;
  lastCharLen = 0;
  lastLineLen = 0;
  #canUnread = false;
  /** The last scanner error (HCL reports only the last). */
  error: PosError | string | undefined;

  /** Offsets count UTF-16 units; columns count runes, as Go's do. */
  constructor(readonly src: string, private readonly errorFormat: "hcl" | "json") {}

  #runeAt(offset: number): string {
    const c = this.src.charCodeAt(offset);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = this.src.charCodeAt(offset + 1);
      if (d >= 0xdc00 && d <= 0xdfff) return this.src.slice(offset, offset + 2);
    }
    return this.src[offset]!;
  }

  next(): string {
    if (this.offset >= this.src.length) {
      this.column++;
      this.lastCharLen = 0;
      this.#canUnread = false;
      return EOF_RUNE;
    }
    const ch = this.#runeAt(this.offset);
    this.#prevLine = this.line;
    this.#prevColumn = this.column;
    this.#prevOffset = this.offset;
    this.column++;
    this.offset += ch.length;
    this.lastCharLen = ch.length;
    this.#canUnread = true;
    if (ch === "\n") {
      this.lastLineLen = this.column;
      this.line++;
      this.column = 0;
    } else if (ch === "\u0000") {
      // Go's scanners use rune 0 as their end-of-input marker; HCL's also reports it.
      if (this.errorFormat === "hcl") this.err("unexpected null character (0x00)");
      return EOF_RUNE;
    } else if (ch === "\uE123" && this.errorFormat === "hcl") {
      this.err("unicode code point U+E123 reserved for internal use");
      return "\uFFFD";
    }
    return ch;
  }

  unread(): void {
    if (!this.#canUnread) {
      throw new GoPanic("bytes.Buffer: UnreadRune: previous operation was not a successful ReadRune");
    }
    this.#canUnread = false;
    this.line = this.#prevLine;
    this.column = this.#prevColumn;
    this.offset = this.#prevOffset;
  }

  peek(): string {
    this.#canUnread = false;
    return this.offset < this.src.length ? this.#runeAt(this.offset) : EOF_RUNE;
  }

  recentPosition(): Pos {
    if (this.column > 0) return { line: this.line, column: this.column };
    if (this.lastLineLen > 0) return { line: this.line - 1, column: this.lastLineLen };
    return { line: 1, column: 1 };
  }

  err(msg: string): void {
    const pos = this.recentPosition();
    this.error = this.errorFormat === "hcl" ? new PosError(pos, msg) : `${pos.line}:${pos.column}: ${msg}`;
  }

  /** Start of the token whose first rune was just read. */
  tokenStart(): { start: number; pos: Pos } {
    const start = this.offset - this.lastCharLen;
    const pos = this.column > 0
      ? { line: this.line, column: this.column }
      : { line: this.line - 1, column: this.lastLineLen };
    return { start, pos };
  }

  text(start: number): string {
    return this.src.slice(start, this.offset);
  }

  scanMantissa(ch: string): string {
    let scanned = false;
    while (isDecimal(ch)) {
      ch = this.next();
      scanned = true;
    }
    if (scanned && ch !== EOF_RUNE) this.unread();
    return ch;
  }

  scanFraction(ch: string): string {
    if (ch === ".") {
      ch = this.peek();
      ch = this.scanMantissa(ch);
    }
    return ch;
  }

  scanExponent(ch: string): string {
    if (ch === "e" || ch === "E") {
      ch = this.next();
      if (ch === "-" || ch === "+") ch = this.next();
      ch = this.scanMantissa(ch);
    }
    return ch;
  }

  /** The next rune that is not white space (space, tab, newline, carriage return). */
  nextNonSpace(): string {
    let ch = this.next();
    while (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") ch = this.next();
    return ch;
  }

  /** After a ".": a FLOAT when digits follow (read with their exponent), else a PERIOD. */
  scanPeriod(): TokenType {
    const ch = this.peek();
    if (!isDecimal(ch)) return "PERIOD";
    this.scanExponent(this.scanMantissa(ch));
    return "FLOAT";
  }

  /**
   * After a number's digits, with `ch` the rune read after them: an exponent, or a fraction and its exponent, are
   * scanned and make the number a float (true); with neither nothing more is read (false).
   */
  scanFloatTail(ch: string): boolean {
    if (ch === "e" || ch === "E") {
      this.scanExponent(ch);
      return true;
    }
    if (ch === ".") {
      ch = this.scanFraction(ch);
      if (ch === "e" || ch === "E") {
        ch = this.next();
        this.scanExponent(ch);
      }
      return true;
    }
    return false;
  }
}

export { digitVal, EOF_RUNE, isDecimal, isDigit, isLetter };

class HclScanner {
  readonly r: RuneReader;

  constructor(src: string) {
    this.r = new RuneReader(src, "hcl");
  }

  scan(): Token {
    const r = this.r;
    const ch = r.nextNonSpace();
    const { start, pos } = r.tokenStart();
    let type: TokenType = "ILLEGAL";
    if (isLetter(ch)) {
      type = "IDENT";
      const lit = this.scanIdentifier(start);
      if (lit === "true" || lit === "false") type = "BOOL";
    } else if (isDecimal(ch)) {
      type = this.scanNumber(ch);
    } else {
      switch (ch) {
        case EOF_RUNE:
          type = "EOF";
          break;
        case '"':
          type = "STRING";
          this.scanString();
          break;
        case "#":
        case "/":
          type = "COMMENT";
          this.scanComment(ch);
          break;
        case ".":
          type = r.scanPeriod();
          break;
        case "<":
          type = "HEREDOC";
          this.scanHeredoc();
          break;
        case "=":
          type = "ASSIGN";
          break;
        case "+":
          type = "ADD";
          break;
        case "-":
          if (isDecimal(r.peek())) {
            type = this.scanNumber(r.next());
          } else type = "SUB";
          break;
        default: {
          const single = punctuation.get(ch);
          if (single) type = single;
          else r.err("illegal char");
        }
      }
    }
    return { type, pos, text: r.text(start) };
  }

  scanIdentifier(start: number): string {
    const r = this.r;
    let ch = r.next();
    while (isLetter(ch) || isDigit(ch) || ch === "-" || ch === ".") ch = r.next();
    if (ch !== EOF_RUNE) r.unread();
    return r.src.slice(start, r.offset);
  }

  scanComment(ch: string): void {
    const r = this.r;
    if (ch === "#" || (ch === "/" && r.peek() !== "*")) {
      if (ch === "/" && r.peek() !== "/") {
        r.err("expected '/' for comment");
        return;
      }
      ch = r.next();
      while (ch !== "\n" && ch !== EOF_RUNE) ch = r.next();
      if (ch !== EOF_RUNE) r.unread();
      return;
    }
    r.next();
    ch = r.next();
    for (;;) {
      if (ch === EOF_RUNE) {
        r.err("comment not terminated");
        break;
      }
      const ch0 = ch;
      ch = r.next();
      if (ch0 === "*" && ch === "/") break;
    }
  }

  scanNumber(ch: string): TokenType {
    const r = this.r;
    if (ch === "0") {
      ch = r.next();
      if (ch === "x" || ch === "X") {
        ch = r.next();
        let found = false;
        while (digitVal(ch) < 16) {
          ch = r.next();
          found = true;
        }
        if (!found) r.err("illegal hexadecimal number");
        if (ch !== EOF_RUNE) r.unread();
        return "NUMBER";
      }
      let illegalOctal = false;
      while (isDecimal(ch)) {
        ch = r.next();
        if (ch === "8" || ch === "9") illegalOctal = true;
      }
      if (r.scanFloatTail(ch)) return "FLOAT";
      if (illegalOctal) r.err("illegal octal number");
      if (ch !== EOF_RUNE) r.unread();
      return "NUMBER";
    }
    r.scanMantissa(ch);
    ch = r.next();
    if (r.scanFloatTail(ch)) return "FLOAT";
    if (ch !== EOF_RUNE) r.unread();
    return "NUMBER";
  }

  scanHeredoc(): void {
    const r = this.r;
    if (r.next() !== "<") {
      r.err("heredoc expected second '<', didn't see it");
      return;
    }
    const anchorStart = r.offset;
    let ch = r.next();
    if (ch === "-") ch = r.next();
    while (isLetter(ch) || isDigit(ch)) ch = r.next();
    if (ch === EOF_RUNE) {
      r.err("heredoc not terminated");
      return;
    }
    if (ch === "\r" && r.peek() === "\n") ch = r.next();
    if (ch !== "\n") {
      r.err("invalid characters in heredoc anchor");
      return;
    }
    const anchor = r.src.slice(anchorStart, r.offset - r.lastCharLen);
    if (anchor === "" || anchor === "-") {
      r.err("zero-length heredoc anchor");
      return;
    }
    const name = anchor.startsWith("-") ? anchor.slice(1) : anchor;
    const anchorBytes = new TextEncoder().encode(anchor).length;
    const closes = (line: string) =>
      new TextEncoder().encode(line).length >= anchorBytes &&
      line.replace(/^[ \t\n\v\f\r]*/, "").replace(/\r*$/, "") === name;
    let lineStart = r.offset;
    for (;;) {
      const c = r.next();
      if (c === "\n") {
        if (closes(r.src.slice(lineStart, r.offset - r.lastCharLen))) break;
        lineStart = r.offset;
      }
      if (c === EOF_RUNE) {
        r.err("heredoc not terminated");
        return;
      }
    }
  }

  scanString(): void {
    const r = this.r;
    let braces = 0;
    for (;;) {
      const ch = r.next();
      if ((ch === "\n" && braces === 0) || ch === EOF_RUNE) {
        r.err("literal not terminated");
        return;
      }
      if (ch === '"' && braces === 0) break;
      if (braces === 0 && ch === "$" && r.peek() === "{") {
        braces++;
        r.next();
      } else if (braces > 0 && ch === "{") braces++;
      if (braces > 0 && ch === "}") braces--;
      if (ch === "\\") this.scanEscape();
    }
  }

  scanEscape(): void {
    const r = this.r;
    const ch = r.next();
    if ('abfnrtv\\"'.includes(ch) && ch !== "") return;
    if (ch >= "0" && ch <= "7" && ch.length === 1) this.scanDigits(ch, 8, 3);
    else if (ch === "x") this.scanDigits(r.next(), 16, 2);
    else if (ch === "u") this.scanDigits(r.next(), 16, 4);
    else if (ch === "U") this.scanDigits(r.next(), 16, 8);
    else r.err("illegal char escape");
  }

  scanDigits(ch: string, base: number, n: number): void {
    const r = this.r;
    const start = n;
    while (n > 0 && digitVal(ch) < base) {
      ch = r.next();
      if (ch === EOF_RUNE) break;
      n--;
    }
    if (n > 0) r.err("illegal char escape");
    if (n !== start && ch !== EOF_RUNE) r.unread();
  }
}

/** The end of input while a key or value was expected: not always an error (see objectList). */
class EndOfInput extends Error {}

class HclParser {
  readonly sc: HclScanner;
  tok: Token = { type: "EOF", pos: { line: 0, column: 0 }, text: "" };
  #buffered = false;
  #depth = 0;

  constructor(src: string) {
    this.sc = new HclScanner(src);
  }

  /** The next token other than a comment (or the one pushed back). */
  scan(): Token {
    if (this.#buffered) {
      this.#buffered = false;
      return this.tok;
    }
    do this.tok = this.sc.scan(); while (this.tok.type === "COMMENT");
    return this.tok;
  }

  unscan(): void {
    this.#buffered = true;
  }

  nest<T>(f: () => T): T {
    if (++this.#depth > maxNesting) throw new LimitError(`blocks or lists nested deeper than ${maxNesting}`);
    try {
      return f();
    } finally {
      this.#depth--;
    }
  }

  objectList(inObject: boolean): { list: ObjectList; error?: Error } {
    const list: ObjectList = { kind: "list", items: [] };
    for (;;) {
      if (inObject) {
        const tok = this.scan();
        this.unscan();
        if (tok.type === "RBRACE") break;
      }
      let item: ObjectItem;
      try {
        item = this.objectItem();
      } catch (err) {
        if (err instanceof EndOfInput) break;
        if (err instanceof PosError) return { list, error: err };
        throw err;
      }
      list.items.push(item);
      const tok = this.scan();
      if (tok.type !== "COMMA") this.unscan();
    }
    return { list };
  }

  objectItem(): ObjectItem {
    let keys: Token[];
    let error: Error | undefined;
    ({ keys, error } = this.objectKey());
    if (keys.length > 0 && error instanceof EndOfInput) error = undefined;
    if (keys.length > 0 && error && this.tok.type === "RBRACE") {
      // HCL forgives keys without a value right before `}` here, and reports the missing value below.
      error = undefined;
      this.tok = { ...this.tok, type: "EOF" };
    }
    if (error) throw error;
    let val: Node;
    if (this.tok.type === "ASSIGN") val = this.object();
    else if (this.tok.type === "LBRACE") val = this.objectType();
    else {
      throw new PosError(
        this.tok.pos,
        `key '${keys.map((k) => k.text).join(" ")}' expected start of object ('{') or assignment ('=')`,
      );
    }
    this.scan();
    this.unscan();
    return { kind: "item", keys, val };
  }

  objectKey(): { keys: Token[]; error?: Error } {
    const keys: Token[] = [];
    for (;;) {
      const tok = this.scan();
      switch (tok.type) {
        case "EOF":
          return { keys, error: new EndOfInput() };
        case "ASSIGN":
          if (keys.length > 1) {
            return { keys: [], error: new PosError(tok.pos, "nested object expected: LBRACE got: ASSIGN") };
          }
          if (keys.length === 0) return { keys: [], error: new PosError(tok.pos, "no object keys found!") };
          return { keys };
        case "LBRACE":
          if (keys.length === 0) {
            return { keys, error: new PosError(tok.pos, "expected: IDENT | STRING got: LBRACE") };
          }
          return { keys };
        case "IDENT":
        case "STRING":
          keys.push(tok);
          break;
        case "ILLEGAL":
          return { keys, error: new PosError(tok.pos, "illegal character") };
        default:
          return {
            keys,
            error: new PosError(tok.pos, `expected: IDENT | STRING | ASSIGN | LBRACE got: ${tok.type}`),
          };
      }
    }
  }

  object(): Node {
    const tok = this.scan();
    switch (tok.type) {
      case "NUMBER":
      case "FLOAT":
      case "BOOL":
      case "STRING":
      case "HEREDOC":
        return this.literal();
      case "LBRACE":
        return this.objectType();
      case "LBRACK":
        return this.listType();
      case "EOF":
        throw new EndOfInput();
    }
    throw new PosError(tok.pos, `Unknown token: ${tok.pos.line}:${tok.pos.column} ${tok.type} ${tok.text}`);
  }

  objectType(): ObjectType {
    return this.nest(() => {
      const pos = this.tok.pos;
      const { list, error } = this.objectList(true);
      if (error && this.tok.type !== "RBRACE") throw error;
      const tok = this.scan();
      if (tok.type !== "RBRACE") {
        throw new PosError(tok.pos, `object expected closing RBRACE got: ${tok.type}`);
      }
      return { kind: "object", pos, list };
    });
  }

  listType(): ListType {
    return this.nest(() => {
      const list: ListType = { kind: "listtype", pos: this.tok.pos, list: [] };
      let needComma = false;
      for (;;) {
        const tok = this.scan();
        if (needComma && tok.type !== "COMMA" && tok.type !== "RBRACK") {
          throw new PosError(tok.pos, `error parsing list, expected comma or list end, got: ${tok.type}`);
        }
        switch (tok.type) {
          case "BOOL":
          case "NUMBER":
          case "FLOAT":
          case "STRING":
          case "HEREDOC":
            list.list.push(this.literal());
            needComma = true;
            break;
          case "COMMA":
            this.scan();
            this.unscan();
            needComma = false;
            break;
          case "LBRACE":
            try {
              list.list.push(this.objectType());
            } catch (err) {
              if (!(err instanceof PosError)) throw err;
              throw new PosError(tok.pos, `error while trying to parse object within list: ${err.message}`);
            }
            needComma = true;
            break;
          case "LBRACK":
            try {
              list.list.push(this.listType());
            } catch (err) {
              if (!(err instanceof PosError)) throw err;
              throw new PosError(tok.pos, `error while trying to parse list within list: ${err.message}`);
            }
            break;
          case "RBRACK":
            return list;
          default:
            throw new PosError(tok.pos, `unexpected token while parsing list: ${tok.type}`);
        }
      }
    });
  }

  literal(): LiteralType {
    return { kind: "literal", token: this.tok };
  }
}

/**
 * Parses HCL policy text into the item tree. Throws PosError (a syntax error, or the last error the scanner
 * met, which HCL reports in preference) or GoPanic.
 */
export function parseHcl(source: string): ObjectList {
  const parser = new HclParser(source.replaceAll("\r\n", "\n"));
  let result: { list: ObjectList; error?: Error };
  try {
    result = parser.objectList(false);
  } catch (err) {
    // A panic (GoPanic) wins over everything, as Go's recover sees it first; nesting too deep is ours.
    if (!(err instanceof GoPanic) && !(err instanceof LimitError) && parser.sc.r.error instanceof PosError) {
      throw parser.sc.r.error;
    }
    throw err;
  }
  if (parser.sc.r.error instanceof PosError) throw parser.sc.r.error;
  if (result.error) throw result.error;
  return result.list;
}
