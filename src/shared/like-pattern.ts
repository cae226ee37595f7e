// A LIKE pattern that finds `text` anywhere, its own wildcards (%, _) and the escape (\) matching themselves: a
// person's search is their words, never a pattern of theirs.
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
