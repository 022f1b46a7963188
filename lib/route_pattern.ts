// Compiles the URLPattern pathname syntax the route tables use (literals, `\` escapes, `:name`,
// `:name(regex)`, `{…}` groups with ? * +) into one RegExp: URLPattern.exec costs microseconds per try,
// a RegExp a tenth of that. Anything else (wildcards, modifiers on parameters) is left to URLPattern.

const regexSpecial = /[.*+?^${}()|[\]\\/]/g;

function escapeRegex(text: string): string {
  return text.replace(regexSpecial, "\\$&");
}

/** The index of the `)` closing the `(` at `open`, honouring escapes and nesting; -1 when unbalanced. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i;
  }
  return -1;
}

/** A RegExp equivalent to `new URLPattern({ pathname })` with named groups, or undefined if unsupported. */
export function compilePathPattern(pathname: string): RegExp | undefined {
  let source = "^";
  let groups = 0;
  let i = 0;
  while (i < pathname.length) {
    const c = pathname[i]!;
    if (c === "\\") {
      const next = pathname[i + 1];
      if (next === undefined) return undefined;
      source += escapeRegex(next);
      i += 2;
    } else if (c === ":") {
      const name = /^:([A-Za-z_$][A-Za-z0-9_$]*)/.exec(pathname.slice(i));
      if (!name) return undefined;
      i += name[0].length;
      let body = "[^\\/]+?";
      if (pathname[i] === "(") {
        const end = closingParen(pathname, i);
        if (end < 0) return undefined;
        body = pathname.slice(i + 1, end);
        i = end + 1;
      }
      const after = pathname[i];
      if (after === "?" || after === "*" || after === "+") return undefined;
      source += `(?<${name[1]}>${body})`;
    } else if (c === "{") {
      groups++;
      source += "(?:";
      i++;
    } else if (c === "}") {
      if (groups-- === 0) return undefined;
      source += ")";
      i++;
      const modifier = pathname[i];
      if (modifier === "?" || modifier === "*" || modifier === "+") {
        source += modifier;
        i++;
      }
    } else if ("*()?+".includes(c)) {
      return undefined;
    } else {
      source += escapeRegex(c);
      i++;
    }
  }
  if (groups !== 0) return undefined;
  try {
    return new RegExp(source + "$", "u");
  } catch {
    return undefined;
  }
}
