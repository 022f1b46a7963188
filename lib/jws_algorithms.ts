// The JWS signature algorithms wharf verifies ID tokens and login JWTs with (asymmetric only, as Boundary's
// and Nomad's OIDC/JWT auth methods accept).

export const jwsAlgorithms: readonly string[] = [
  "RS256",
  "RS384",
  "RS512",
  "ES256",
  "ES384",
  "ES512",
  "PS256",
  "PS384",
  "PS512",
  "EdDSA",
];
