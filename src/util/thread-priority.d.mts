/** See thread-priority.mjs. */
export declare const HELPER_THREAD_NICE: number;
export declare function niceThisThread(nice?: number): boolean;
export declare function nameThisThread(name: string): boolean;
