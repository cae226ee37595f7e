/** Which conversation, and whose: what every activity that touches a conversation's rows is given. */
export interface ConversationRef {
  conversationId: string;
  userId: string;
}
