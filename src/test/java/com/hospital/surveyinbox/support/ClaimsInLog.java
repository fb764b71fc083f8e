package com.hospital.surveyinbox.support;

import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;

/** What a service JVM's log says of the rows it claimed: the ones it has not finished (yet, or ever: a killed JVM). */
public final class ClaimsInLog {

    private static final Pattern CLAIMED = Pattern.compile("Inbox (\\d+) claimed");
    /** Every way a claim ends in the log: an outcome recorded, a deferral, or a stale claim's outcome not recorded. */
    private static final Pattern FINISHED = Pattern.compile(
            "Inbox (\\d+) (COMPLETED|FAILED|DEAD|deferred|attempt \\d+: outcome not recorded)");

    private ClaimsInLog() {
    }

    /** The inbox ids {@code log} claimed and never finished. */
    public static Set<String> unfinished(String log) {
        Set<String> open = new HashSet<>();
        CLAIMED.matcher(log).results().forEach(m -> open.add(m.group(1)));
        FINISHED.matcher(log).results().forEach(m -> open.remove(m.group(1)));
        return open;
    }
}
