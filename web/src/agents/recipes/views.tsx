// The recipes agent's SQL results laid out to read (issue 46, item 5): a list of recipes as cards by name (their
// ids stay in the result the model reads, never on screen), any other query's rows as a table.
import type { ReactNode } from 'react';
import { SAVED_RECIPE_COLUMNS } from '../../../../src/agents/recipes/columns.ts';
import { RowsTable, cellText } from '../../RowsTable';
import { plural } from '../../plural';
import { Fact, type Row, isObject } from '../../resultParts';

/** rows of saved_recipes' columns alone are recipes, not a computed table */
const RECIPE_COLUMNS = new Set<string>(SAVED_RECIPE_COLUMNS);

const minutes = (v: unknown) => (typeof v === 'number' && v > 0 ? `${v} min` : '');
const typeName = (v: unknown) => {
  const t = cellText(v);
  return t ? t[0]!.toUpperCase() + t.slice(1) : '';
};

/** "200 g egg noodles (soft)" */
function ingredientLine(item: unknown): string {
  if (!isObject(item)) return cellText(item);
  const amount = [cellText(item.quantity), cellText(item.unit)].filter(Boolean).join(' ');
  const notes = cellText(item.notes);
  return `${amount ? `${amount} ` : ''}${cellText(item.name)}${notes ? ` (${notes})` : ''}`;
}

function RecipeResult({ recipe }: { recipe: Row }) {
  const name = cellText(recipe.name) || 'Recipe';
  const ingredients = Array.isArray(recipe.ingredients) ? recipe.ingredients.map(ingredientLine).filter(Boolean) : [];
  const steps = Array.isArray(recipe.instructions) ? recipe.instructions.map(cellText).filter(Boolean) : [];
  return (
    <li className="card result-card recipe-result">
      <article className="card-body" aria-label={`Recipe ${name}`}>
        <h3>{name}</h3>
        <dl className="facts">
          <Fact term="Type">{typeName(recipe.recipe_type)}</Fact>
          <Fact term="Prep time">{minutes(recipe.prep_time)}</Fact>
          <Fact term="Cook time">{minutes(recipe.cook_time)}</Fact>
          <Fact term="Serves">{cellText(recipe.servings)}</Fact>
          <Fact term="Tags">{cellText(recipe.tags)}</Fact>
          <Fact term="Notes">{cellText(recipe.notes)}</Fact>
          <Fact term="Your notes">{cellText(recipe.user_notes)}</Fact>
        </dl>
        {ingredients.length > 0 && (
          <>
            <h4>Ingredients</h4>
            <ul>
              {ingredients.map((line, i) => (
                <li key={i}>{line}</li>
              ))}
            </ul>
          </>
        )}
        {steps.length > 0 && (
          <>
            <h4>Steps</h4>
            <ol>
              {steps.map((line, i) => (
                <li key={i}>{line}</li>
              ))}
            </ol>
          </>
        )}
      </article>
    </li>
  );
}

/** Rows of the table's own columns, each with a name: recipes, not a computed table. */
export function rowsAreRecipes(rows: unknown[]): boolean {
  return rows.every((row) => isObject(row) && cellText(row.name) !== '' && Object.keys(row).every((key) => RECIPE_COLUMNS.has(key)));
}

/** execute_recipe_sql: recipes (rows of the table's own columns, with a name) as cards, other rows as a table. */
export function recipeSqlView(result: unknown): ReactNode | undefined {
  if (!isObject(result)) return undefined;
  // an UPDATE's sentence says what changed: there is nothing more to lay out
  if (typeof result.rows_affected === 'number') return null;
  if (!Array.isArray(result.rows)) return undefined;
  const rows = result.rows.filter(isObject);
  if (rows.length === 0) return null;
  if (rowsAreRecipes(rows))
    return (
      <ul className="recipe-results" aria-label={plural(rows.length, 'recipe')}>
        {rows.map((row, i) => (
          <RecipeResult key={i} recipe={row} />
        ))}
      </ul>
    );
  return <RowsTable rows={rows} caption={plural(rows.length, 'row')} />;
}
