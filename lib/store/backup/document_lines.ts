// What a documents line of an archive must be before restore writes it (docs/operations.md#the-archive): the
// stored form of one document, as `backup create` writes it: an id the store can name a file by, a version from
// 1, the log index that wrote it and an object. Whether the object suits its collection is the server's business.

import { fileNameForId } from "../doc_names.ts";
import { lineBytes } from "../file/line_reader.ts";

const decoder = new TextDecoder();

/** What is wrong with one parsed documents line, or undefined when it is a stored document. */
export function storedDocProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `it is ${
      value === null ? "null" : Array.isArray(value) ? "a list" : typeof value
    }, not a document`;
  }
  const { id, version, index, doc } = value as Record<string, unknown>;
  if (typeof id !== "string") return "its id is not a string";
  try {
    fileNameForId(id);
  } catch (err) {
    return `its id is not one the store can hold (${(err as Error).message})`;
  }
  if (!Number.isSafeInteger(version) || (version as number) < 1) {
    return "its version is not a whole number of at least 1";
  }
  if (!Number.isSafeInteger(index) || (index as number) < 0) {
    return "its index is not a whole number of at least 0";
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return "its doc is not an object";
  return undefined;
}

/** An entry's first this many damaged lines are named; the rest are counted. */
const namedPerEntry = 10;

/**
 * The problems of a documents entry's lines (its payload in `chunks`), each naming the entry and the 1-based line.
 * One line is held at a time (its values within the cap verify counted before this reads it).
 */
export async function documentLinesProblems(
  name: string,
  chunks: AsyncIterable<Uint8Array>,
): Promise<string[]> {
  const problems: string[] = [];
  let damaged = 0;
  let lineNumber = 0;
  const check = (bytes: Uint8Array) => {
    lineNumber++;
    if (!bytes.length) return;
    let problem: string | undefined;
    try {
      problem = storedDocProblem(JSON.parse(decoder.decode(bytes)));
    } catch {
      problem = "it is not valid JSON";
    }
    if (problem && ++damaged <= namedPerEntry) {
      problems.push(`${name} line ${lineNumber} is damaged: ${problem}`);
    }
  };
  for await (const line of lineBytes(chunks)) check(line);
  if (damaged > namedPerEntry) problems.push(`${name}: ${damaged - namedPerEntry} more lines are damaged`);
  return problems;
}
