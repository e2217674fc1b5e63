/** Keys typed into these are text, not a page's shortcuts (a checkbox or a button is not one of them). */
export function isTextField(element: HTMLElement): boolean {
  if (element.tagName === "INPUT") return !["checkbox", "radio", "button", "submit"].includes((element as HTMLInputElement).type);
  return element.tagName === "TEXTAREA" || element.tagName === "SELECT" || element.isContentEditable;
}
