// The recipe a sous conversation starts from when the client gives none.
import type { RecipeInput } from './schemas.ts';

export const DEMO_RECIPE: RecipeInput = {
  title: 'Lemon garlic spaghetti',
  servings: 2,
  ingredients: [
    { id: 'i1', text: '200 g spaghetti' },
    { id: 'i2', text: '3 tbsp butter' },
    { id: 'i3', text: '2 cloves garlic, minced' },
    { id: 'i4', text: '1 lemon, zested and juiced' },
    { id: 'i5', text: '40 g parmesan, grated' },
    { id: 'i6', text: '1 pinch salt' },
  ],
  steps: [
    { id: 's1', text: 'Bring a large pot of salted water to the boil.' },
    { id: 's2', text: 'Cook the spaghetti until al dente, about 9 minutes; keep a cup of the pasta water.' },
    { id: 's3', text: 'Melt the butter in a pan over low heat and soften the garlic for 1 minute.' },
    { id: 's4', text: 'Toss the spaghetti in the pan with the lemon zest and juice, adding pasta water as needed.' },
    { id: 's5', text: 'Serve topped with the parmesan and a pinch of salt.' },
  ],
  notes: [],
};
