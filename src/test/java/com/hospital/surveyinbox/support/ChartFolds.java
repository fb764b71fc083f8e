package com.hospital.surveyinbox.support;

import com.hospital.surveyinbox.inbox.SqlFiles;
import java.util.Map;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * The redelivery job's two chart steps (V14: {@code sql/history-fold-span.sql}, then
 * {@code sql/fold-history-minutes.sql}) run from a test or the benchmark, as a tick runs them.
 */
public final class ChartFolds {

    private ChartFolds() {
    }

    /** The span the next fold counts (lo, hi, was). */
    public static Map<String, Object> span(JdbcTemplate jdbc) {
        return jdbc.queryForMap(SqlFiles.read("history-fold-span"));
    }

    /** sql/fold-history-minutes.sql with camel-sql's named parameters (:#name) bound from the span. */
    public static void fold(JdbcTemplate jdbc, Map<String, Object> span) {
        new NamedParameterJdbcTemplate(jdbc).update(SqlFiles.read("fold-history-minutes").replace(":#", ":"), span);
    }

    /** Folds as often as ticks would until nothing is left (then once more, empty); returns the folds that counted. */
    public static int foldUntilCaughtUp(JdbcTemplate jdbc) {
        for (int folds = 0; folds < 40; folds++) {
            Map<String, Object> span = span(jdbc);
            boolean empty = !jdbc.queryForObject("SELECT CAST(? AS TIMESTAMPTZ) > CAST(? AS TIMESTAMPTZ)", Boolean.class,
                    span.get("hi"), span.get("lo"));
            fold(jdbc, span); // an empty span changes no count, and still drops old minutes
            if (empty) {
                return folds;
            }
        }
        throw new AssertionError("not caught up after 40 folds");
    }
}
