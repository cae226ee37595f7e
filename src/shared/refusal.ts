// Why a decision was refused, as the API says it: words for people, and, when the words are about fields of
// an answer or of edited arguments, the fields themselves (the 422 body's `fields`, shown at each field).

export interface FieldIssue {
  field: string;
  message: string;
}

export type Refusal = string | { message: string; fields: FieldIssue[] };

export const refusalMessage = (refusal: Refusal): string => (typeof refusal === 'string' ? refusal : refusal.message);
