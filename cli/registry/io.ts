// What a command reads and writes: the process's own streams and terminal, or a test's buffers.

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The whole of stdin (for --password-stdin). */
  readStdin(): Promise<string>;
  /** Asks for a password without echo; undefined when there is no terminal. */
  promptPassword(question: string): Promise<string | undefined>;
  env: Readonly<Record<string, string>>;
  /** Raw text to stderr (live progress), and whether stderr is a terminal; stderr() lines otherwise. */
  writeStderr?(text: string): void;
  stderrIsTerminal?: boolean;
}

/** The real terminal and process streams. */
export function processIo(): CliIo {
  const encoder = new TextEncoder();
  return {
    stdout: (t) => console.log(t),
    stderr: (t) => console.error(t),
    readStdin: async () => new TextDecoder().decode(await new Response(Deno.stdin.readable).arrayBuffer()),
    promptPassword: async (question) => {
      if (!Deno.stdin.isTerminal()) return undefined;
      Deno.stdout.writeSync(encoder.encode(question));
      Deno.stdin.setRaw(true);
      const typed: number[] = [];
      const buf = new Uint8Array(1);
      try {
        for (;;) {
          const n = await Deno.stdin.read(buf);
          if (n === null || buf[0] === 13 || buf[0] === 10) break;
          if (buf[0] === 3) throw new Error("interrupted");
          if (buf[0] === 127) typed.pop();
          else typed.push(buf[0]!);
        }
      } finally {
        Deno.stdin.setRaw(false);
        Deno.stdout.writeSync(encoder.encode("\n"));
      }
      return new TextDecoder().decode(new Uint8Array(typed));
    },
    env: Deno.env.toObject(),
    writeStderr: (t) => {
      const bytes = encoder.encode(t);
      for (let at = 0; at < bytes.length;) at += Deno.stderr.writeSync(bytes.subarray(at));
    },
    stderrIsTerminal: Deno.stderr.isTerminal(),
  };
}
