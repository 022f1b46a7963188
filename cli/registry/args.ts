// `wharf registry` arguments: positionals and --flags, and a password read from stdin or the terminal (never argv).

import type { CliIo } from "./io.ts";

/** Wrong usage: the message is printed with the usage text, exit code 2. */
export class UsageError extends Error {}

export interface Parsed {
  positional: string[];
  flags: Map<string, string[]>;
}

const booleanFlags = new Set(["admin", "cascade", "password-stdin", "password", "help"]);

export function parse(args: readonly string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) {
      positional.push(arg);
      continue;
    }
    const name = m[1]!;
    let value = m[2];
    if (value === undefined && !booleanFlags.has(name)) {
      value = args[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
    }
    flags.set(name, [...(flags.get(name) ?? []), value ?? "true"]);
  }
  return { positional, flags };
}

export function flag(p: Parsed, name: string): string | undefined {
  return p.flags.get(name)?.at(-1);
}

export function boolFlag(p: Parsed, name: string): boolean | undefined {
  const v = flag(p, name);
  if (v === undefined) return undefined;
  if (v === "true") return true;
  if (v === "false") return false;
  throw new UsageError(`--${name} takes true or false`);
}

export function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

export async function readPassword(p: Parsed, io: CliIo, question = "Password: "): Promise<string> {
  if (p.flags.has("password-stdin")) return (await io.readStdin()).replace(/\r?\n$/, "");
  const typed = await io.promptPassword(question);
  if (typed === undefined) throw new UsageError("no terminal to ask for the password: use --password-stdin");
  return typed;
}
