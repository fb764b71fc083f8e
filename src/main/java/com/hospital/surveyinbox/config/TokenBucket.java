package com.hospital.surveyinbox.config;

/**
 * A token bucket: at most {@code capacity} tokens, refilled continuously at {@code perSecond}. Used per
 * sender by the reception rate limit and per client address by the failed-authentication limit.
 */
public final class TokenBucket {

    private final double capacity;
    private final double perSecond;
    private double tokens;
    private long last = System.nanoTime();

    public TokenBucket(double capacity, double perSecond) {
        this.capacity = capacity;
        this.perSecond = perSecond;
        this.tokens = capacity;
    }

    private void refill() {
        long now = System.nanoTime();
        tokens = Math.min(capacity, tokens + (now - last) / 1e9 * perSecond);
        last = now;
    }

    /** Takes a token if there is one; false (nothing taken) otherwise. */
    public synchronized boolean tryTake() {
        refill();
        if (tokens >= 1) {
            tokens -= 1;
            return true;
        }
        return false;
    }

    /** Whether a token is available, taking none. */
    public synchronized boolean hasToken() {
        refill();
        return tokens >= 1;
    }

    /** Takes a token whether or not one is left (never below zero). */
    public synchronized void take() {
        refill();
        tokens = Math.max(0, tokens - 1);
    }

    /** Whether the bucket has refilled completely: it then holds no more than a new one would. */
    public synchronized boolean isFull() {
        refill();
        return tokens >= capacity;
    }

    /** Whole seconds until the next token, at least 1. */
    public synchronized long secondsToNextToken() {
        refill();
        return Math.max(1, (long) Math.ceil((1 - tokens) / perSecond));
    }
}
