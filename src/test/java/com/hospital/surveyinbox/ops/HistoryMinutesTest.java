package com.hospital.surveyinbox.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.ChartFolds;
import com.hospital.surveyinbox.support.EmbeddedServices;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * Issue 22: the console's chart (GET /ops/inbox/history) reads the minutes the redelivery job folded (V14) and
 * counts rows only from the watermark on. Each rule on real PostgreSQL, with the statements the route runs
 * ({@code sql/history-fold-span.sql}, {@code sql/fold-history-minutes.sql}) and the chart as the service reads it
 * ({@link InboxHistory#perMinute}). The route's own tick: {@code RedeliveryTest.eachTickFoldsTheChartsMinutes}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HistoryMinutesTest {

    static String database;
    static SingleConnectionDataSource dataSource;
    static JdbcTemplate jdbc;
    static InboxHistory history;

    @BeforeAll
    static void database() {
        database = "history_minutes_" + System.nanoTime();
        String url = EmbeddedServices.get().migratedDatabase(database);
        dataSource = new SingleConnectionDataSource(url, EmbeddedServices.DB_USER, "", true);
        jdbc = new JdbcTemplate(dataSource);
        history = new InboxHistory(jdbc);
        // rows received and attempts ended over the last day, at these many minutes before the current one: n rows
        // received in the minute (n = 1 + offset % 4), each with an attempt ended there, COMPLETED, FAILED or DEAD
        for (int offset : new int[] {3, 5, 17, 61, 200, 700, 1300}) {
            received(offset);
        }
        // and one this very moment: in a minute no fold may count yet
        jdbc.update("INSERT INTO inbox_message (srvy_drawup_no, msg_type) VALUES ('HIS-NOW', 'SEND')");
    }

    /** 1 + offset % 4 rows received {@code offset} minutes before the current one, each with an attempt ended then. */
    static void received(int offset) {
        jdbc.update("""
                WITH rows AS (
                  INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at, updated_at)
                  SELECT 'HIS-' || ? || '-' || g, 'SEND', 'COMPLETED', 1, t.at, t.at
                    FROM generate_series(1, 1 + ? % 4) g,
                         LATERAL (SELECT date_trunc('minute', now()) - make_interval(mins => ?) + INTERVAL '10 seconds' AS at) t
                  RETURNING id, created_at
                )
                INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, finished_at, outcome)
                SELECT id, 1, created_at, created_at + INTERVAL '20 seconds',
                       (ARRAY['COMPLETED', 'FAILED', 'DEAD'])[1 + (id % 3)::int] FROM rows
                """, offset, offset, offset);
    }

    @AfterAll
    static void drop() {
        dataSource.destroy();
        EmbeddedServices.get().dropDatabase(database);
    }

    @Test
    @Order(1)
    void foldedMinutesGiveTheChartTheCountsTheRowsGaveAndKeepThemWhenTheRowsAreGone() {
        // V14 starts a day back: nothing folded, every minute counted from the rows
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_history_minute", Long.class)).isZero();
        Map<OffsetDateTime, List<Long>> fromRows = chart();
        assertThat(fromRows.values().stream().mapToLong(m -> m.get(0)).sum()).as("rows received in the chart").isEqualTo(
                jdbc.queryForObject("SELECT count(*) FROM inbox_message", Long.class));

        int folds = foldUntilCaughtUp();
        assertThat(folds).as("a day, an hour a fold").isBetween(24, 25);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_history_minute WHERE received > 0", Long.class))
                .as("the minutes that had rows, the last two minutes excepted").isEqualTo(7);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_history_minute", Long.class))
                .as("every minute of the day but the last two, the quiet ones as 0").isBetween(1436L, 1439L);
        assertThat(sameMinutes(chart(), fromRows)).isTrue();

        // retention deletes rows (and their attempts) of long ago: the chart still shows what happened then
        OffsetDateTime hourAgo = jdbc.queryForObject("SELECT date_trunc('minute', created_at) FROM inbox_message"
                + " WHERE srvy_drawup_no = 'HIS-61-1'", OffsetDateTime.class);
        jdbc.update("DELETE FROM inbox_attempt WHERE inbox_id IN (SELECT id FROM inbox_message"
                + " WHERE created_at < (SELECT folded_until FROM inbox_history_folded))");
        jdbc.update("DELETE FROM inbox_message WHERE created_at < (SELECT folded_until FROM inbox_history_folded)");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message", Long.class)).as("rows left").isEqualTo(1);
        Map<OffsetDateTime, List<Long>> afterRetention = chart();
        assertThat(sameMinutes(afterRetention, fromRows)).isTrue();
        // 61 minutes before the current one: 2 rows received, their 2 attempts ended there
        List<Long> minute = afterRetention.get(hourAgo.withOffsetSameInstant(afterRetention.keySet().iterator().next().getOffset()));
        assertThat(minute).as("the minute of HIS-61 in %s", afterRetention.keySet().iterator().next()).isNotNull();
        assertThat(minute.get(0)).isEqualTo(2);
        assertThat(minute.get(1) + minute.get(2) + minute.get(3)).isEqualTo(2);
    }

    @Test
    @Order(2)
    void aFoldCountsAnHourAtMostAndNeverTheLastTwoMinutes() {
        jdbc.update("UPDATE inbox_history_folded SET folded_until = date_trunc('minute', now()) - INTERVAL '1440 minutes'");
        Map<String, Object> span = ChartFolds.span(jdbc);
        assertThat(jdbc.queryForObject("SELECT CAST(? AS TIMESTAMPTZ) - CAST(? AS TIMESTAMPTZ) = INTERVAL '1 hour'",
                Boolean.class, span.get("hi"), span.get("lo"))).isTrue();
        foldUntilCaughtUp();
        assertThat(jdbc.queryForObject("SELECT folded_until BETWEEN date_trunc('minute', now()) - INTERVAL '3 minutes'"
                + " AND now() - INTERVAL '2 minutes' FROM inbox_history_folded", Boolean.class)).isTrue();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_history_minute WHERE minute >= now() - INTERVAL '2 minutes'",
                Long.class)).as("minutes that may still gain rows").isZero();
        // the row received this moment is in the chart all the same, counted from the rows
        assertThat(chart().values().stream().mapToLong(m -> m.get(0)).sum()).isEqualTo(
                jdbc.queryForObject("SELECT sum(received) FROM inbox_history_minute", Long.class)
                        + jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE created_at >= "
                        + "(SELECT folded_until FROM inbox_history_folded)", Long.class));
    }

    @Test
    @Order(3)
    void aFoldRunTwiceForOneSpanReplacesItsCountsAndNeverMovesTheWatermarkBack() {
        received(30);
        received(41);
        jdbc.update("UPDATE inbox_history_folded SET folded_until = date_trunc('minute', now()) - INTERVAL '70 minutes'");
        Map<OffsetDateTime, List<Long>> before = chart();
        Map<String, Object> first = ChartFolds.span(jdbc); // an hour: up to 10 minutes ago
        fold(first);
        foldUntilCaughtUp();
        Object watermark = jdbc.queryForObject("SELECT folded_until FROM inbox_history_folded", Object.class);
        fold(first); // a second pod's tick that read the span before the others folded, or a retry
        assertThat(jdbc.queryForObject("SELECT folded_until FROM inbox_history_folded", Object.class))
                .as("not moved back to the stale span's end").isEqualTo(watermark);
        assertThat(sameMinutes(chart(), before)).as("counts replaced, never added twice").isTrue();
    }

    @Test
    @Order(4)
    void minutesOlderThanTheLongestChartAreDropped() {
        jdbc.update("INSERT INTO inbox_history_minute VALUES (date_trunc('minute', now()) - INTERVAL '2 days', 5, 5, 0, 0)");
        jdbc.update("INSERT INTO inbox_history_minute VALUES (date_trunc('minute', now()) - INTERVAL '1439 minutes', 1, 1, 0, 0)"
                + " ON CONFLICT (minute) DO NOTHING");
        foldUntilCaughtUp();
        assertThat(jdbc.queryForObject("SELECT min(minute) >= date_trunc('minute', now()) - INTERVAL '1441 minutes'"
                + " FROM inbox_history_minute", Boolean.class)).isTrue();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_history_minute WHERE minute > now() - INTERVAL '1440 minutes'",
                Long.class)).as("the day's minutes stay").isPositive();
    }

    @Test
    @Order(5)
    void aWatermarkWrittenByHandMidMinuteCountsNothingTwice() {
        jdbc.update("UPDATE inbox_history_folded SET folded_until = date_trunc('minute', now()) - INTERVAL '30 minutes'");
        received(20);
        received(22);
        foldUntilCaughtUp();
        Map<OffsetDateTime, List<Long>> folded = chart();
        // an operator's "count the last 22 minutes again", written without date_trunc: 5 s into the minute whose rows
        // came 10 s into it (counted twice, folded and from the rows, if the chart split at 10:38:05 instead of 10:38)
        jdbc.update("UPDATE inbox_history_folded SET folded_until = date_trunc('minute', now()) - INTERVAL '22 minutes'"
                + " + INTERVAL '5 seconds'");
        assertThat(sameMinutes(chart(), folded)).as("the chart at once").isTrue();
        foldUntilCaughtUp();
        assertThat(sameMinutes(chart(), folded)).as("the chart once folded again").isTrue();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_history_minute WHERE minute <> date_trunc('minute', minute)",
                Long.class)).as("minutes stored off the minute").isZero();
    }

    @Test
    @Order(6)
    void aWatermarkInTheFutureCountsTheLastDayAgainInsteadOfStoppingTheChart() {
        foldUntilCaughtUp();
        Map<OffsetDateTime, List<Long>> folded = chart();
        jdbc.update("UPDATE inbox_history_folded SET folded_until = now() + INTERVAL '3 hours'");
        Map<String, Object> span = ChartFolds.span(jdbc);
        assertThat(jdbc.queryForObject("SELECT CAST(? AS TIMESTAMPTZ) = date_trunc('minute', now()) - INTERVAL '1440 minutes'",
                Boolean.class, span.get("lo"))).isTrue();
        foldUntilCaughtUp();
        assertThat(jdbc.queryForObject("SELECT folded_until < now() FROM inbox_history_folded", Boolean.class)).isTrue();
        assertThat(sameMinutes(chart(), folded)).isTrue();
    }

    /** The chart of a day as the service reads it: minute -> received, completed, failed, dead. */
    private static Map<OffsetDateTime, List<Long>> chart() {
        Map<OffsetDateTime, List<Long>> byMinute = new TreeMap<>();
        for (InboxHistory.MinuteView m : history.perMinute(1440)) {
            byMinute.put(m.minute(), List.of(m.received(), m.completed(), m.failed(), m.dead()));
        }
        return byMinute;
    }

    /** Equal on the minutes both charts show (the window moves on if a minute ends between them), and not trivially. */
    private static boolean sameMinutes(Map<OffsetDateTime, List<Long>> a, Map<OffsetDateTime, List<Long>> b) {
        List<OffsetDateTime> shared = a.keySet().stream().filter(b::containsKey).toList();
        assertThat(shared).hasSizeGreaterThan(1430);
        assertThat(shared.stream().mapToLong(m -> a.get(m).get(0)).sum()).as("rows received in both").isGreaterThan(3);
        for (OffsetDateTime minute : shared) {
            assertThat(a.get(minute)).as("minute %s", minute).isEqualTo(b.get(minute));
        }
        return true;
    }

    private static int foldUntilCaughtUp() {
        return ChartFolds.foldUntilCaughtUp(jdbc);
    }

    private static void fold(Map<String, Object> span) {
        ChartFolds.fold(jdbc, span);
    }
}
