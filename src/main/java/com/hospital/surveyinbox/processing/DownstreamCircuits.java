package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.config.AdapterProperties;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * One circuit per downstream (legacy, account, survey), so a plain outage is not billed to the rows.
 * {@code failure-threshold} consecutive system errors (5xx, 3xx, timeout, refused) of at least two different messages
 * (subjects) open it, and so do
 * {@code failure-threshold} <em>different</em> requests of one call failing since that call last answered (within ten
 * open-durations), whatever
 * its downstream's other calls do: the account system's guest creation down while its search answers (each message's
 * search, a 404, cleared the count above before its creation failed, so it never opened and every row was charged
 * its attempts to DEAD). Different requests, because one request failing again and again is a failing request, not a
 * failing downstream: one survey whose consent lookup always fails (the same GET for all its messages, most other
 * lookups served from the cache) must not hold the whole legacy circuit while other calls answer in between. The
 * consecutive count asks for two messages, not two requests: the legacy system down while one survey makes the
 * traffic fails every row at that survey's one lookup, and must open it (a burst of that one broken survey's rows
 * with nothing answering in between opens it too: a delay of open-duration, where the other way was every row of
 * an outage charged to DEAD). While open, rows
 * that need that downstream are deferred without being charged an attempt and without a call. After
 * {@code open-duration} it half-opens: up to {@code failure-threshold} trial calls go through (each one
 * charged like any call: a row whose own calls always fail must reach DEAD, not be deferred forever), the
 * others are deferred as while open; the first success closes it, a failure re-opens it. When one call's different
 * failing requests opened it, only that call's calls are trials and only its success closes it: the other calls
 * answered all along and go on being let through while it is half-open (failure-threshold of their failures in a
 * row make it the downstream's outage again). So an outage
 * costs about {@code failure-threshold} attempts per {@code open-duration} in all, spread over the rows,
 * while rows that always get a 5xx (a poison row, no other traffic) are charged on every retry and go DEAD
 * after {@code max-attempts} of them. An accepted JSON answer or a 4xx counts as "the downstream is up", business
 * errors included; not a "not now" 4xx (401, 407, 408, 429), a 4xx in text that is not JSON (a gateway's) or a
 * markup page (DownstreamCalls#after). Recorded by {@link DownstreamCalls} around every HTTP step but the replies'
 * (circuitExempt); inbox-reply (inbox-reply-if-legacy-circuit-open) and inbox-register
 * (inbox-register-if-later-downstream-open) ask {@link #isOpen}.
 */
@Component("downstreamCircuits")
public class DownstreamCircuits {

    public static final List<String> DOWNSTREAMS = List.of("legacy", "account", "survey");
    private static final Logger log = LoggerFactory.getLogger(DownstreamCircuits.class);

    /** Circuit state; the gauge value is the ordinal. */
    public enum State {
        /** Calls flow; consecutive system errors, and each call's different failing requests, are counted. */
        CLOSED,
        /** The downstream is considered down: rows needing it are deferred, uncharged. */
        OPEN,
        /** Open duration elapsed: trial calls decide (only the opening call's, when one call's failures opened it). */
        HALF_OPEN
    }

    private static final class Circuit {
        int consecutiveFailures;
        /** The message (subject) of the run of consecutive failures' first, and whether another message failed in it. */
        int runFirstMessage;
        boolean runMixed;
        Instant openedAt;
        /** Trial calls let through since the circuit last (re-)opened. */
        int trials;
        /**
         * Per call (a step id): the different requests (their fingerprints) that failed since the call last answered,
         * each with its last failure; at most failure-threshold are kept, and one older than {@link #recordWindow} is
         * forgotten (a row failing on retries keeps its entry fresh; failures weeks apart never add up). Cleared by
         * the call's own answer, and all of them when the circuit closes.
         */
        final Map<String, Map<Integer, Instant>> failedRequests = new java.util.HashMap<>();
        /**
         * The call whose different failing requests opened the circuit (null: the downstream's count did): only its
         * own answer closes it then, and only its calls are trials while half-open. The other calls (the search,
         * while the creation is down) answered all along: as trials their answers would close it at once.
         */
        String openedBy;
        /** Other calls' failures in a row while {@link #openedBy} holds it: failure-threshold of them, the downstream's. */
        int othersFailing;
    }

    /** How long a failed request stays in its call's record: ten open-durations (5 minutes by default). */
    private java.time.Duration recordWindow() {
        return properties.getCircuit().getOpenDuration().multipliedBy(10);
    }

    private final AdapterProperties properties;
    private final Clock clock;
    private final Map<String, Circuit> circuits = new ConcurrentHashMap<>();
    /**
     * Times each circuit opened or re-opened (a failed half-open trial). In an outage the state gauge alternates
     * between open and half-open, so "open for 5 minutes" is never seen on it; the alert counts openings instead.
     */
    private final Map<String, Counter> openings = new ConcurrentHashMap<>();

    @org.springframework.beans.factory.annotation.Autowired
    public DownstreamCircuits(AdapterProperties properties, MeterRegistry meters) {
        // monotonic: a step back of the pod's wall clock must not hold a circuit open for the length of the step
        this(properties, meters, new com.hospital.surveyinbox.config.MonotonicClock());
    }

    Clock clock() {
        return clock;
    }

    DownstreamCircuits(AdapterProperties properties, MeterRegistry meters, Clock clock) {
        this.properties = properties;
        this.clock = clock;
        for (String downstream : DOWNSTREAMS) {
            circuits.put(downstream, new Circuit());
            Gauge.builder("adapter.circuit.state", () -> state(downstream).ordinal())
                    .description("0 closed, 1 open, 2 half-open")
                    .tag("downstream", downstream).register(meters);
            openings.put(downstream, Counter.builder("adapter.circuit.opened")
                    .description("times the circuit opened or re-opened after a failed half-open trial")
                    .tag("downstream", downstream).register(meters));
        }
    }

    public State state(String downstream) {
        Circuit c = circuits.get(downstream);
        if (c == null) {
            return State.CLOSED;
        }
        synchronized (c) {
            if (c.openedAt == null) {
                return State.CLOSED;
            }
            return clock.instant().isBefore(c.openedAt.plus(properties.getCircuit().getOpenDuration()))
                    ? State.OPEN : State.HALF_OPEN;
        }
    }

    /**
     * Whether {@code downstream}'s circuit is open now (not half-open, and never while circuits are disabled): the legacy
     * reply waits then (routes/inbox-reply.camel.yaml, inbox-reply-if-legacy-circuit-open) without taking a trial, and a
     * SEND waits before its first call while the survey or account circuit is (inbox-register-if-later-downstream-open).
     */
    public boolean isOpen(String downstream) {
        return properties.getCircuit().isEnabled() && state(downstream) == State.OPEN;
    }

    /**
     * Whether {@code call} (a step id) to {@code downstream} may be made now: always while closed, never while open,
     * and while half-open as one of at most {@code failure-threshold} trials of this half-open phase. When one call's
     * failures opened it, the other calls are no trials while it is half-open: they answered all along and their
     * answers cannot close it, so as trials they would take every slot and hold it half-open with nothing let
     * through (and if the failing call is not made again, forever).
     */
    public boolean admit(String downstream, String call) {
        Circuit c = circuits.get(downstream);
        if (!properties.getCircuit().isEnabled() || c == null) {
            return true;
        }
        synchronized (c) {
            return switch (state(downstream)) {
                case CLOSED -> true;
                case OPEN -> false;
                case HALF_OPEN -> (c.openedBy != null && !c.openedBy.equals(call))
                        || c.trials++ < properties.getCircuit().getFailureThreshold();
            };
        }
    }

    /**
     * {@code call} (a step id) of {@code downstream} answered: the circuit closes (a trial passed; when another call's
     * failures opened it, only that call's answer closes it) and its count starts again. The call's failed requests
     * are forgotten; another call's are kept while the circuit was closed (a write
     * side down opens it however often the reads answer), and forgotten when this answer closes it: after a trial
     * passed, failure-threshold different requests must fail again to re-open it, so a record filled slowly (one
     * survey's lookup failing for weeks, a few others now and then) opens it once, not at each failure from then on.
     */
    public void recordSuccess(String downstream, String call) {
        Circuit c = circuits.get(downstream);
        if (c == null) {
            return;
        }
        boolean closed;
        synchronized (c) {
            c.failedRequests.remove(call);
            c.consecutiveFailures = 0;
            c.runMixed = false;
            if (c.openedAt != null && c.openedBy != null && !c.openedBy.equals(call)) {
                c.othersFailing = 0;
                return; // another call answered: the one that opened it has not
            }
            closed = c.openedAt != null;
            if (closed) {
                c.failedRequests.clear();
            }
            c.openedAt = null;
            c.openedBy = null;
            c.othersFailing = 0;
            c.trials = 0;
        }
        if (closed) { // logged outside the circuit's lock: every admit() of the downstream waits on it
            log.info("Circuit of {} closed: it answers again", downstream);
        }
    }

    /** Closes the circuit and forgets every call's failed requests (a test's clean start). */
    public void reset(String downstream) {
        Circuit c = circuits.get(downstream);
        if (c != null) {
            synchronized (c) {
                c.failedRequests.clear();
                c.openedBy = null;
            }
            recordSuccess(downstream, "");
        }
    }

    /** {@link #recordFailure(String, String, int, int)} for a request of a message of its own (tests). */
    public void recordFailure(String downstream, String call, int request) {
        recordFailure(downstream, call, request, request);
    }

    /**
     * A system error of {@code call} (a step id) of {@code downstream}, for the request whose fingerprint is
     * {@code request} (the same request sent again has the same one), made for the message {@code message} (its
     * subject's hash): failure-threshold in a row of the downstream, of two messages at least, or failure-threshold
     * different requests of the call since it last answered, open the circuit. Messages, not requests: one message's
     * retries failing with nothing in between (a poison row on a quiet night) are no outage, while many messages
     * failing on one shared request (every SEND of one survey at its consent lookup, the legacy system down) are.
     */
    public void recordFailure(String downstream, String call, int request, int message) {
        Circuit c = circuits.get(downstream);
        if (c == null || !properties.getCircuit().isEnabled()) {
            return; // disabled: nothing opens, nothing is counted as an opening
        }
        int threshold = properties.getCircuit().getFailureThreshold();
        int consecutive;
        int different;
        boolean opened = false;
        String why = null;
        synchronized (c) {
            consecutive = ++c.consecutiveFailures;
            if (consecutive == 1) {
                c.runFirstMessage = message;
            } else if (message != c.runFirstMessage) {
                c.runMixed = true;
            }
            // one message's retries failing with nothing else in between (a poison row on a quiet night, a test's
            // injected 5xx) opened the circuit at the row's last attempt and held the next rows (and its own DEAD reply,
            // when legacy) for open-duration; two messages in the run are an outage
            boolean inARow = consecutive >= threshold && c.runMixed;
            Instant now = clock.instant();
            Map<Integer, Instant> failed = c.failedRequests.computeIfAbsent(call, k -> new java.util.HashMap<>());
            Instant forgotten = now.minus(recordWindow());
            failed.values().removeIf(at -> at.isBefore(forgotten));
            if (failed.size() < threshold || failed.containsKey(request)) {
                failed.put(request, now);
            }
            different = failed.size();
            boolean counted = inARow || different >= threshold;
            State before = state(downstream);
            boolean open;
            if (before == State.CLOSED) {
                open = counted;
                if (open) {
                    c.openedBy = inARow ? null : call;
                    why = inARow ? consecutive + " system errors in a row"
                            : different + " different requests of " + call + " failing";
                }
            } else if (c.openedBy == null || c.openedBy.equals(call)) {
                open = true; // a failed trial (or a call made before it opened failing late): open again
                why = "a trial of " + call + " failed";
            } else {
                // another call failing while one call's failures hold it (not a trial: let through while half-open,
                // or made before it opened): failure-threshold of them in a row, or its own record of different
                // requests full, make it the downstream's outage; one does not
                open = ++c.othersFailing >= threshold && c.runMixed || different >= threshold;
                if (open) {
                    c.openedBy = null;
                    why = "its other calls failing too (" + call + ")";
                }
            }
            if (open) {
                opened = before != State.OPEN;
                c.openedAt = now;
                c.othersFailing = 0;
                c.trials = 0;
            }
        }
        if (opened) { // counted and logged outside the circuit's lock: every admit() of the downstream waits on it
            openings.get(downstream).increment();
            log.warn("Circuit of {} open: {}; rows needing it wait uncharged for {}",
                    downstream, why, properties.getCircuit().getOpenDuration());
        }
    }
}
