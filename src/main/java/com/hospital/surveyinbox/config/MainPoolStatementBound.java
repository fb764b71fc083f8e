package com.hospital.surveyinbox.config;

import com.zaxxer.hikari.HikariDataSource;
import java.util.Properties;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.stereotype.Component;

/**
 * Every statement on the main pool's connections (workers, Quartz, the jobs, the operator API) ends on the server
 * before the socket timeout ends it on the client: {@code statement_timeout} half a second under {@code socketTimeout},
 * {@code lock_timeout} a second under it (the receptions' pool has its own, a second under it, ReceptionConnections).
 * <p>
 * Why: the socket timeout only makes the client give up. PostgreSQL does not notice a client that left while its
 * statement waits for a lock, so the statement stays on the server, holding its row locks and its snapshot, until
 * it can finish. Seen in the big-table benchmark: two redelivery ticks' count folds timed out on the client and
 * were still running on the server three minutes later; while they ran, their snapshot kept vacuum from removing
 * dead rows, every later tick's sweeps walked the dead index entries (idle ticks 74-122 ms instead of 4-10), and
 * the count deltas they had locked stayed unfolded. A statement the client gave up on must not go on, let alone
 * commit later. A {@code socketTimeout} of 0 (none) sets no bound.
 */
@Component
public class MainPoolStatementBound implements BeanPostProcessor {

    /** The server-side bound for a connection whose client waits {@code socketSeconds} (0: none), in ms. */
    public static long boundMillis(int socketSeconds) {
        return socketSeconds <= 0 ? 0 : socketSeconds * 1000L - 500L;
    }

    /** {@code options} with the bound for {@code socketSeconds} appended (later settings win in PostgreSQL). */
    public static String withBound(String options, int socketSeconds) {
        return withBoundMillis(options, boundMillis(socketSeconds));
    }

    /**
     * {@code options} with {@code statement_timeout} of {@code bound} ms and {@code lock_timeout} half a second under
     * it appended (0: none). Under it, not equal: a statement that waits for a lock from its start would otherwise
     * reach statement_timeout first and fail as "slow" (57014, query_canceled); this way a statement held by a lock
     * fails as such (55P03, lock_not_available), and the log of a failed job step tells the two apart.
     */
    public static String withBoundMillis(String options, long bound) {
        String base = options == null ? "" : options.strip();
        long lock = bound > 1000 ? bound - 500 : bound;
        return bound == 0 ? base : (base + " -c statement_timeout=" + bound + " -c lock_timeout=" + lock).strip();
    }

    /**
     * The driver's own spelling for keys that match one of its properties but for case: an environment variable
     * such as {@code SPRING_DATASOURCE_HIKARI_DATASOURCEPROPERTIES_SOCKETTIMEOUT} binds as {@code sockettimeout},
     * which the PostgreSQL driver (case-sensitive) would silently ignore.
     */
    public static void normalizeKeys(Properties properties) {
        for (org.postgresql.PGProperty known : org.postgresql.PGProperty.values()) {
            for (String key : properties.stringPropertyNames()) {
                if (!key.equals(known.getName()) && key.equalsIgnoreCase(known.getName())) {
                    properties.setProperty(known.getName(), properties.getProperty(key));
                    properties.remove(key);
                }
            }
        }
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof HikariDataSource hikari && hikari.getHikariPoolMXBean() == null) { // not started yet
            Properties properties = hikari.getDataSourceProperties();
            normalizeKeys(properties);
            int socketSeconds = Integer.parseInt(String.valueOf(properties.getOrDefault("socketTimeout", "0")).strip());
            String options = withBound(properties.getProperty("options"), socketSeconds);
            if (!options.isEmpty()) {
                hikari.addDataSourceProperty("options", options);
            }
        }
        return bean;
    }
}
