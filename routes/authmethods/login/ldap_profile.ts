// An LDAP account's profile (email, full_name) from the user's entry, as account_attribute_maps direct.

/** Lowercased entry attribute names to read email and full_name from, in order of preference. */
interface ProfileSources {
  email: string[];
  fullName: string[];
}

/** account_attribute_maps parsed once per method document (a method write replaces the array). */
const parsedMaps = new WeakMap<object, ProfileSources>();

function profileSources(maps: unknown): ProfileSources {
  const cached = Array.isArray(maps) ? parsedMaps.get(maps) : undefined;
  if (cached) return cached;
  const sources: ProfileSources = { email: [], fullName: [] };
  for (const m of Array.isArray(maps) ? maps : []) {
    const [from, to] = String(m).split("=").map((s) => s.trim());
    if (!from || !to) continue;
    if (to.toLowerCase() === "email") sources.email.push(from.toLowerCase());
    if (to.toLowerCase() === "fullname") sources.fullName.push(from.toLowerCase());
  }
  sources.email.push("email");
  sources.fullName.push("fullname");
  if (Array.isArray(maps)) parsedMaps.set(maps, sources);
  return sources;
}

/** email / full_name from the entry: account_attribute_maps first, then attributes named email / fullName. */
export function mapLdapAttributes(
  maps: unknown,
  entry: Record<string, string[]>,
): { email?: string; full_name?: string } {
  const sources = profileSources(maps);
  const lower = new Map<string, string[]>();
  for (const k in entry) lower.set(k.toLowerCase(), entry[k]!);
  const first = (names: string[]) => {
    for (const n of names) {
      const v = lower.get(n)?.[0];
      if (v) return v;
    }
    return undefined;
  };
  const out: { email?: string; full_name?: string } = {};
  const email = first(sources.email);
  const fullName = first(sources.fullName);
  if (email) out.email = email;
  if (fullName) out.full_name = fullName;
  return out;
}
