/**
 * The k-th smallest value (0-based) of `a`, which it partly reorders (Hoare's selection, linear
 * on average), for a caller that needs a rank or two rather than a sorted copy: the jitter
 * buffer's delay estimate (its minimum and 95th percentile of 150 values every ten packets,
 * where sorting was a visible share of the media thread at 100 calls). `a` holds no NaN.
 */
export function kthSmallest(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    // Now a[lo..j] <= pivot <= a[i..hi], and everything between equals the pivot.
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}
