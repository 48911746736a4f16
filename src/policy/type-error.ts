/**
 * A readable compile error, shared by the DSL (an unknown kind property) and the generated guards (a
 * prune a kind's policy refuses): a forbidden type is this interface, which no value is, so the compiler's
 * message quotes `E` ("… is not assignable to type PruneguardTypeError<'kind scratch …'>").
 */
export interface PruneguardTypeError<E extends string> {
  readonly __pruneguardTypeError__: E;
}
