/** `text` as a regular expression that matches it literally (a search or a name given by a person, never a pattern). */
export const regExpLiteral = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
