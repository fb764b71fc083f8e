package com.hospital.surveyinbox.config;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import org.slf4j.Marker;

/**
 * A cap on log lines that say the same thing over and over: at most {@code limit} lines of one kind per
 * {@code window}; the others are dropped, counted, and said in one line after the window ("N more lines like this
 * one were dropped in the last 60 s ...": at the kind's next line, or at the installer's next tick), without the MDC
 * of the line that happens to carry it. An outage made one line per request or row (Tomcat's "Executor rejected
 * socket" with its stack trace per turned-away connection, one per 503 reception, one per failed call, the Kafka clients' reconnect
 * lines): thousands a second, the log pipeline's cost and the lines that mattered lost among them.
 *
 * <p>A kind is the logger, the level, the line as written with its numbers masked (an id, a count, a port, an
 * object's hash: {@code Inbox 123 ...} and {@code Inbox 456 ...} are one kind, {@code System error from legacy ...}
 * and {@code ... from survey ...} two) and the throwable's class. A line with the marker {@link #ALWAYS} is never
 * dropped: the only record of something (a subject registered synchronously but not recorded). Only WARN and ERROR lines
 * that would be written count: INFO is the rows' journal ("Inbox 123 claimed", "... COMPLETED"), as many lines as
 * messages whatever happens, and never capped. Kinds are kept in a bounded map, least recently used
 * first out. Installed by {@link RepeatedLogLinesInstaller}.
 */
public final class RepeatedLogLines extends TurboFilter {

    /** Kinds remembered at once; a new one beyond it forgets the least recently used (its drops said first). */
    static final int MAX_KINDS = 1000;
    /** A line with this marker (Camel's log EIP: {@code marker: ALWAYS}) is always written, whatever its kind's count. */
    public static final String ALWAYS = "ALWAYS";
    /** Characters of a line that make its kind: a kind is no bigger than this in memory. */
    private static final int KIND_CHARS = 300;
    private static final Pattern NUMBERS = Pattern.compile("@?[0-9a-fA-F]*[0-9][0-9a-fA-F]*");
    private static final int SHOWN = 200;

    private static final class Window {
        final Logger logger;
        final Level level;
        final String shown;
        long start;
        int written;
        int dropped;

        Window(Logger logger, Level level, String shown, long start) {
            this.logger = logger;
            this.level = level;
            this.shown = shown;
            this.start = start;
        }
    }

    private final int limit;
    private final long windowNanos;
    private final LongSupplier nanos;
    private final Consumer<String> droppedOf;
    private final Map<String, Window> windows = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Window> eldest) {
            if (size() <= MAX_KINDS) {
                return false;
            }
            if (eldest.getValue().dropped > 0) {
                forgotten.get().add(eldest.getValue());
            }
            return true;
        }
    };
    /** Windows forgotten (to bound the map) with drops not yet said, said once the map's lock is released. */
    private final ThreadLocal<List<Window>> forgotten = ThreadLocal.withInitial(ArrayList::new);
    /** Set while this filter writes its own summary line (which passes through it too). */
    private final ThreadLocal<Boolean> summarizing = new ThreadLocal<>();

    /**
     * @param limit lines of one kind written per window (at least 1)
     * @param windowNanos the window's length
     * @param nanos a monotonic clock (System::nanoTime)
     * @param droppedOf told the logger's name of each dropped line (a counter)
     */
    public RepeatedLogLines(int limit, long windowNanos, LongSupplier nanos, Consumer<String> droppedOf) {
        this.limit = limit;
        this.windowNanos = windowNanos;
        this.nanos = nanos;
        this.droppedOf = droppedOf;
        setName("repeated-log-lines");
    }

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        // isDebugEnabled() and the like come here without a format: the cheap answers first
        if (format == null || level == null || level.levelInt < Level.WARN_INT || logger == null
                || !level.isGreaterOrEqual(logger.getEffectiveLevel()) || summarizing.get() != null
                || (marker != null && marker.contains(ALWAYS))) {
            return FilterReply.NEUTRAL;
        }
        // the line as it will be written (a WARN or ERROR: rare, formatted once more here), its numbers masked; a
        // throwable passed last among the parameters is the line's throwable, as Logback takes it
        var line = org.slf4j.helpers.MessageFormatter.arrayFormat(format, params);
        Throwable thrown = t != null ? t : line.getThrowable();
        String text = line.getMessage();
        String masked = NUMBERS.matcher(text.length() > KIND_CHARS ? text.substring(0, KIND_CHARS) : text).replaceAll("#");
        String kind = logger.getName() + '\u0000' + level + '\u0000' + masked + '\u0000' + (thrown == null ? "" : thrown.getClass().getName());
        long now = nanos.getAsLong();
        int droppedBefore = 0;
        boolean write;
        Window w;
        synchronized (windows) {
            w = windows.get(kind);
            if (w == null) {
                w = new Window(logger, level, shown(masked), now);
                windows.put(kind, w);
            } else if (now - w.start >= windowNanos) {
                droppedBefore = w.dropped;
                w.start = now;
                w.written = 0;
                w.dropped = 0;
            }
            write = w.written < limit;
            if (write) {
                w.written++;
            } else {
                w.dropped++;
            }
        }
        List<Window> forgottenHere = forgotten.get();
        if (!forgottenHere.isEmpty()) {
            List<Window> said = new ArrayList<>(forgottenHere);
            forgottenHere.clear();
            say(said);
        }
        if (droppedBefore > 0) {
            summarize(w, droppedBefore);
        }
        if (!write) {
            droppedOf.accept(logger.getName());
            return FilterReply.DENY;
        }
        return FilterReply.NEUTRAL;
    }

    /**
     * Says the drops of every window that has ended (a storm that stopped is reported too, not only at its kind's
     * next line) and forgets those kinds. Run every window by the installer.
     */
    public void flush() {
        long now = nanos.getAsLong();
        List<Window> ended = new ArrayList<>();
        synchronized (windows) {
            for (Iterator<Window> it = windows.values().iterator(); it.hasNext(); ) {
                Window w = it.next();
                if (now - w.start >= windowNanos) {
                    if (w.dropped > 0) {
                        ended.add(w);
                    }
                    it.remove();
                }
            }
        }
        say(ended);
    }

    /** The drops of windows no longer counted (ended, or forgotten to bound the map). */
    private void say(List<Window> closed) {
        for (Window w : closed) {
            summarize(w, w.dropped);
        }
    }

    private static String shown(String masked) {
        return masked.length() > SHOWN ? masked.substring(0, SHOWN) + "…" : masked;
    }

    /** Kinds remembered now. */
    int kinds() {
        synchronized (windows) {
            return windows.size();
        }
    }

    private void summarize(Window w, int dropped) {
        Logger logger = w.logger;
        // written on whichever thread logs the kind's next line: not with that line's row (inboxId, trace)
        var mdc = logger.getLoggerContext().getMDCAdapter();
        Map<String, String> lineContext = mdc == null ? null : mdc.getCopyOfContextMap();
        if (mdc != null) {
            mdc.clear();
        }
        summarizing.set(Boolean.TRUE);
        try {
            String line = "{} more lines like this one were dropped in the last {} s (adapter.logging.repeat-limit {}): {}";
            Object[] args = {dropped, windowNanos / 1_000_000_000L, limit, w.shown};
            if (w.level.levelInt >= Level.ERROR_INT) {
                logger.error(line, args);
            } else {
                logger.warn(line, args);
            }
        } finally {
            summarizing.remove();
            if (mdc != null && lineContext != null) {
                mdc.setContextMap(lineContext);
            }
        }
    }
}
