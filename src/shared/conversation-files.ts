// Where a conversation's own files live in the object store (what its MCP tools returned), so that deleting
// the conversation erases them with it. Files a user keeps beyond the conversation (a saved recipe's image)
// live elsewhere.
export const conversationFilesPrefix = (conversationId: string) => `mcp/${conversationId}/`;
