// The error a client caused, independent of wire shape; each API family renders it in its own shape.

/** Boundary-style kinds double as a neutral vocabulary; other families ignore `kind`. */
export type ErrorKind =
  | "InvalidArgument"
  | "NotFound"
  | "Unauthenticated"
  | "PermissionDenied"
  | "FailedPrecondition"
  | "Aborted"
  | "AlreadyExists"
  | "ResourceExhausted"
  | "Unavailable"
  | "Internal";

export interface ApiErrorOptions {
  kind?: ErrorKind;
  /** Extra, family-specific detail (e.g. Boundary's request_fields). */
  details?: Record<string, unknown>;
  headers?: HeadersInit;
}

const kindByStatus: Record<number, ErrorKind> = {
  400: "InvalidArgument",
  401: "Unauthenticated",
  403: "PermissionDenied",
  404: "NotFound",
  409: "Aborted",
  412: "FailedPrecondition",
  413: "InvalidArgument",
  429: "ResourceExhausted",
  503: "Unavailable",
};

/** A failure to report to the client with `status`; `message` says what to change. */
export class ApiError extends Error {
  readonly status: number;
  readonly kind: ErrorKind;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: HeadersInit | undefined;

  constructor(status: number, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.kind = options.kind ?? kindByStatus[status] ?? (status >= 500 ? "Internal" : "InvalidArgument");
    this.details = options.details;
    this.headers = options.headers;
  }
}

/** Thrown by configuration parsing; main turns it into a one-line message and exit code 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}
