// The recipes agent's child workflows, for the workflow bundle's generated entry. The exported names are
// workflow types in recorded histories: never rename one.
export { saveRecipe } from './save-recipe-workflow.ts';
