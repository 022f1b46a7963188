// The one name rule of Nomad's ACL objects: policies, roles, auth methods and the policy or role a binding rule
// binds to are named with 1–128 of a-z A-Z 0-9 - (docs/events.md).

/** A valid ACL policy, role or auth method name (and a computed policy or role bind name). */
export const aclObjectName = /^[a-zA-Z0-9-]{1,128}$/;
