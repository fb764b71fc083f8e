package com.hospital.surveyinbox.config;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.function.LongSupplier;

/**
 * A {@link Clock} for measuring how long something lasts inside this JVM (a circuit's open duration, a
 * redelivery tick's budgets): its instants move with {@link System#nanoTime()}, from the wall clock's instant
 * when it was made, so a step of the pod's wall clock (NTP correcting minutes at once, a VM resumed) neither
 * holds a circuit open for the length of the step back nor lets a tick's reply budget run for it. Never for a
 * time written anywhere or compared with another process's: it drifts from the wall clock by the steps it ignores.
 */
public final class MonotonicClock extends Clock {

    private final Instant origin;
    private final long originNanos;
    private final LongSupplier nanoTime;

    public MonotonicClock() {
        this(Instant.now(), System::nanoTime);
    }

    /** {@code nanoTime}: the monotonic source ({@code System::nanoTime}; a test's ticker). */
    public MonotonicClock(Instant origin, LongSupplier nanoTime) {
        this.origin = origin;
        this.nanoTime = nanoTime;
        this.originNanos = nanoTime.getAsLong();
    }

    @Override
    public Instant instant() {
        return origin.plusNanos(nanoTime.getAsLong() - originNanos);
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        if (ZoneOffset.UTC.equals(zone)) {
            return this;
        }
        throw new UnsupportedOperationException("a clock for durations has no zone: " + zone);
    }
}
