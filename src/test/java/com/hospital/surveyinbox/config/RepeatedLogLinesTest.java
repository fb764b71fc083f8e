package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The cap on repeated log lines, on a Logback context of its own (a clock the test moves). */
class RepeatedLogLinesTest {

    private static final long MINUTE = 60_000_000_000L;

    private final AtomicLong nanos = new AtomicLong(1_000);
    private final List<String> dropped = new ArrayList<>();
    private final LoggerContext context = new LoggerContext();
    private final ListAppender<ILoggingEvent> written = new ListAppender<>() {
        @Override
        protected void append(ILoggingEvent event) {
            event.prepareForDeferredProcessing(); // its MDC as it was when it was written
            super.append(event);
        }
    };
    private RepeatedLogLines filter;

    @BeforeEach
    void logback() {
        filter = new RepeatedLogLines(3, MINUTE, nanos::get, dropped::add);
        filter.start();
        context.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter());
        context.addTurboFilter(filter);
        written.setContext(context);
        written.start();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.INFO);
        root.addAppender(written);
    }

    /** A distinct text for each number, without digits (digits are masked). */
    private static String letters(int n) {
        StringBuilder text = new StringBuilder();
        do {
            text.append((char) ('a' + n % 26));
            n /= 26;
        } while (n > 0);
        return text.toString();
    }

    private List<String> lines() {
        return written.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    /**
     * One line per request in an outage (ids, ports and object hashes differ, the message does not): three a minute
     * are written, the rest dropped and counted, and the first line of the next minute is preceded by how many were.
     */
    @Test
    void linesThatDifferOnlyInTheirNumbersAreCappedPerWindowAndTheirDropsSaid() {
        Logger reception = context.getLogger("inbox-receive");
        for (int i = 0; i < 50; i++) {
            reception.warn("Inbox unavailable; answering 503 so the sender retries: row {} on port {}", 1000 + i, 5432);
        }
        Logger tomcat = context.getLogger("org.apache.tomcat.util.net.NioEndpoint");
        RuntimeException rejected = new java.util.concurrent.RejectedExecutionException("queue full");
        for (int i = 0; i < 10; i++) {
            tomcat.warn("Executor rejected socket [org.apache.tomcat.util.net.NioEndpoint$NioSocketWrapper@" + Integer.toHexString(0x2bd0c5b9 + i * 7919)
                    + ":java.nio.channels.SocketChannel[connected local=/127.0.0.1:8080 remote=/127.0.0.1:" + (52000 + i) + "]] for processing", rejected);
        }
        assertThat(lines()).hasSize(6);
        assertThat(dropped).hasSize(47 + 7).containsOnly("inbox-receive", "org.apache.tomcat.util.net.NioEndpoint");

        nanos.addAndGet(MINUTE);
        context.getMDCAdapter().put("inboxId", "2000");
        reception.warn("Inbox unavailable; answering 503 so the sender retries: row {} on port {}", 2000, 5432);
        context.getMDCAdapter().remove("inboxId");
        assertThat(lines().subList(6, 8)).satisfiesExactly(
                summary -> assertThat(summary).startsWith("47 more lines like this one were dropped in the last 60 s")
                        .contains("Inbox unavailable; answering # so the sender retries: row # on port #"),
                line -> assertThat(line).contains("row 2000"));
        assertThat(written.list.get(6).getLevel()).isEqualTo(Level.WARN);
        assertThat(written.list.get(6).getMDCPropertyMap()).as("the summary is not the line's row's").doesNotContainKey("inboxId");
        assertThat(written.list.get(7).getMDCPropertyMap()).as("the line keeps its row").containsEntry("inboxId", "2000");

        // a storm that stopped is said too, at the window's end, without a line of its kind to carry it
        filter.flush();
        assertThat(lines()).hasSize(9);
        assertThat(lines().get(8)).startsWith("7 more lines like this one were dropped").contains("Executor rejected socket [");
        filter.flush();
        assertThat(lines()).as("said once").hasSize(9);
    }

    /**
     * Different messages, levels and loggers are counted apart; INFO lines (the rows' journal, one per message) are
     * never capped; lines a logger would not write never count.
     */
    @Test
    void onlyWarningsAndErrorsOfOneKindThatWouldBeWrittenCountTogether() {
        Logger worker = context.getLogger("com.hospital.surveyinbox.processing.DownstreamCalls");
        Logger quiet = context.getLogger("org.apache.kafka");
        quiet.setLevel(Level.ERROR);
        for (int i = 0; i < 10; i++) {
            worker.debug("debug {}", i);
            quiet.warn("Connection to node {} could not be established", i);
            worker.info("Inbox {} COMPLETED", i);
            worker.warn("System error from {} at {}: HTTP {}", "legacy", "inbox-register-legacy-patient", 503);
            worker.error("System error from {} at {}: HTTP {}", "legacy", "inbox-register-legacy-patient", 503);
            worker.warn("Circuit of {} open", "legacy");
        }
        assertThat(lines()).hasSize(10 + 3 + 3 + 3);
        assertThat(dropped).hasSize(21);
        quiet.error("Connection to node {} could not be established", -1);
        assertThat(lines()).as("the quiet logger's ERROR line written (its WARN lines were never written)").hasSize(20);
        // the same template with another downstream or step is another kind: its first line is written
        worker.warn("System error from {} at {}: HTTP {}", "survey", "inbox-register-survey-bundle", 503);
        worker.warn("Circuit of {} open", "account");
        assertThat(lines()).hasSize(22);
        // a throwable passed last among the parameters is part of the kind, as it is the line's
        worker.warn("Registration failed at {}", "x", new IllegalStateException("a"));
        worker.warn("Registration failed at {}", "x", new IllegalStateException("b"));
        worker.warn("Registration failed at {}", "x", new IllegalStateException("c"));
        worker.warn("Registration failed at {}", "x", new java.io.UncheckedIOException(new java.io.IOException("d")));
        assertThat(lines()).hasSize(26);
        assertThat(dropped).hasSize(21);
        for (int i = 0; i < 5; i++) {
            worker.warn("Registration failed at {}", "x", new IllegalStateException("e"));
        }
        assertThat(dropped).hasSize(26);
    }

    /** A line marked ALWAYS (the only record of something) is written whatever its kind's count. */
    @Test
    void aLineMarkedAlwaysIsNeverDropped() {
        Logger reception = context.getLogger("inbox-receive");
        org.slf4j.Marker always = org.slf4j.MarkerFactory.getMarker(RepeatedLogLines.ALWAYS);
        for (int i = 0; i < 10; i++) {
            reception.error(always, "Subject S-{} registered synchronously but not recorded", i);
        }
        assertThat(lines()).hasSize(10);
        assertThat(dropped).isEmpty();
    }

    /** The kinds remembered are bounded: messages that never repeat (each with its own text) cannot grow the map. */
    @Test
    void kindsAreBoundedAndTheOldestForgotten() {
        Logger route = context.getLogger("inbox-ops");
        for (int i = 0; i < RepeatedLogLines.MAX_KINDS + 10; i++) {
            route.warn("operator read " + letters(i));
        }
        assertThat(dropped).isEmpty();
        assertThat(lines()).hasSize(RepeatedLogLines.MAX_KINDS + 10);
        assertThat(filter.kinds()).isEqualTo(RepeatedLogLines.MAX_KINDS);

        // a kind forgotten to bound the map says its drops first
        Logger storm = context.getLogger("storm");
        for (int i = 0; i < 5; i++) {
            storm.warn("the first kind");
        }
        for (int i = 0; i < RepeatedLogLines.MAX_KINDS; i++) {
            route.warn("another read " + letters(i));
        }
        assertThat(lines()).anySatisfy(line -> assertThat(line).startsWith("2 more lines like this one were dropped").endsWith("the first kind"));
    }
}
