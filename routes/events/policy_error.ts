// The one error the policy language throws: its message is the reason shown to the client.

/** A policy that does not parse or validate; `message` is the reason (`policy 0 invalid: <message>`). */
export class PolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PolicyError";
  }
}
