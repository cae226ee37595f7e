export { chatSession } from './chat-session.ts';
export { breweryRecommendation } from './brewery-recommendation.ts';
