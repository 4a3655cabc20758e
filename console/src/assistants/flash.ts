/** What a save leaves for the page it navigates to (the saved message and the API's warnings). */
export interface Flash {
  message: string;
  warnings: Array<{ field?: string; message: string }>;
}

let pending: Flash | null = null;

export function setFlash(flash: Flash): void {
  pending = flash;
}

export function takeFlash(): Flash | null {
  const f = pending;
  pending = null;
  return f;
}
