// An id unique in the document for the life of the component. Preact's useId
// repeats ids when a subtree first renders after a state change (a dialog
// opened, a page's filters re-rendered): it numbers from the nearest vnode it
// finds with a counter, which there is not the app's root, so a dialog's
// fields got the ids of the page's own fields and their labels pointed at the
// page's inputs. A module counter cannot repeat.
import { useState } from 'preact/hooks';

let next = 0;

export function useUniqueId(prefix = 'id'): string {
  const [id] = useState(() => `${prefix}-${++next}`);
  return id;
}
