package com.hospital.surveyinbox.config;

import com.zaxxer.hikari.HikariDataSource;
import java.util.Properties;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.stereotype.Component;

/**
 * Every statement on the main pool's connections (workers, Quartz, the jobs, the operator API) ends on the server
 * before the socket timeout ends it on the client: {@code statement_timeout} and {@code lock_timeout} half a second
 * under {@code socketTimeout} (the receptions' pool has its own, a second under it, ReceptionConnections).
 * <p>
 * Why: the socket timeout only makes the client give up. PostgreSQL does not notice a client that left while its
 * statement waits for a lock, so the statement stays on the server, holding its row locks and its snapshot, until
 * it can finish. Seen in the big-table benchmark: two redelivery ticks' count folds timed out on the client and
 * were still running on the server three minutes later; while they ran, their snapshot kept vacuum from removing
 * dead rows, every later tick's sweeps walked the dead index entries (idle ticks 74-122 ms instead of 4-10), and
 * the count deltas they had locked stayed unfolded. A statement the client gave up on must not go on, let alone
 * commit later. A {@code socketTimeout} of 0 (none) sets no bound.
 * <p>
 * It also appends {@code idle_in_transaction_session_timeout} with server keepalives ({@link #abandonable}: 30 s here,
 * 10 s on the receptions' pool), and {@code -c synchronous_commit=on} ({@link #durable}), here and in ReceptionConnections: a role or
 * database set to {@code off}/{@code local} would lose acknowledged messages in a crash (CONTRACT §1).
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
     * {@code options} with {@code statement_timeout} and {@code lock_timeout} of {@code bound} ms appended (0: none).
     * Equal, not the lock's shorter: one bound for a reception's statement, its lock waits (another pod's subject
     * lock) included; either ending (57014, 55P03) is answered 503.
     */
    public static String withBoundMillis(String options, long bound) {
        String base = options == null ? "" : options.strip();
        return bound == 0 ? base : (base + " -c statement_timeout=" + bound + " -c lock_timeout=" + bound).strip();
    }

    /** How long the main pool's sessions may sit in an open transaction with nothing sent (ms); see {@link #abandonable}. */
    public static final long MAIN_IDLE_IN_TRANSACTION_MILLIS = 30_000;

    /**
     * {@code options} with the server ending a transaction its client left open for {@code idleInTransactionMillis}
     * with nothing sent, and probing an idle client every 10 s after 30 s (three unanswered probes end the session).
     * A pod whose node died or was cut off mid-transaction (a group insert holding its subjects' advisory locks, a
     * claim) closes no socket: its transaction, and every lock it held, stayed on the server until the OS's
     * keepalive gave up (2 h), every later reception of those subjects answered 503 after its lock wait. No
     * transaction of the service waits on its client that long (statements only, none across a call).
     */
    public static String abandonable(String options, long idleInTransactionMillis) {
        String base = options == null ? "" : options.strip();
        return (base + " -c idle_in_transaction_session_timeout=" + idleInTransactionMillis + " " + SERVER_KEEPALIVES).strip();
    }

    /** The server probes an idle client every 10 s after 30 s; three unanswered probes end the session. */
    public static final String SERVER_KEEPALIVES = "-c tcp_keepalives_idle=30 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=3";

    /**
     * {@code options} with {@code synchronous_commit=on}: a row answered 200, or an outcome recorded, is flushed
     * (and with a synchronous standby, replicated) before the commit returns. A role or database set to
     * {@code off} or {@code local} by a DBA (a common tuning) would otherwise lose acknowledged messages in a crash
     * or failover without a trace (CONTRACT §1). Session options win over a role's or a database's settings.
     */
    public static String durable(String options) {
        String base = options == null ? "" : options.strip();
        return base.endsWith("-c synchronous_commit=on") ? base : (base + " -c synchronous_commit=on").strip();
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

    /**
     * {@code url} without its {@code options} and {@code socketTimeout} parameters, which are moved (decoded) into
     * {@code properties}. The PostgreSQL driver lets a URL parameter win over the same data source
     * property, so {@code jdbc:postgresql://db/inbox?options=-c%20search_path%3Dinbox} would have replaced the
     * options carrying the bound, and a URL's {@code socketTimeout} would have gone unseen by it; as properties,
     * the bound is derived from the socket timeout that applies and appended to the options the URL asked for.
     */
    public static String liftFromUrl(String url, Properties properties) {
        int query = url == null ? -1 : url.indexOf('?');
        if (query < 0) {
            return url;
        }
        String[] parameters = url.substring(query + 1).split("&");
        // the driver takes a repeated parameter's last value: that one decides, and every occurrence goes with it
        java.util.Map<String, String> last = new java.util.HashMap<>();
        for (String parameter : parameters) {
            int eq = parameter.indexOf('=');
            String key = keyOf(parameter);
            // spelled as the driver reads them (its URL parameters are case-sensitive: "SocketTimeout=3" is ignored
            // there, and stays so)
            if (key.equals("options") || key.equals("socketTimeout")) {
                last.put(key, eq < 0 ? "" : java.net.URLDecoder.decode(parameter.substring(eq + 1), java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        // an empty value stays in the URL, for the driver to refuse or ignore as before
        last.values().removeIf(String::isEmpty);
        properties.putAll(last);
        java.util.List<String> kept = new java.util.ArrayList<>();
        for (String parameter : parameters) {
            if (!parameter.isEmpty() && !last.containsKey(keyOf(parameter))) {
                kept.add(parameter);
            }
        }
        return url.substring(0, query) + (kept.isEmpty() ? "" : "?" + String.join("&", kept));
    }

    /** A URL parameter's name: what precedes its first '=' (all of it without one). */
    private static String keyOf(String parameter) {
        int eq = parameter.indexOf('=');
        return eq < 0 ? parameter : parameter.substring(0, eq);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof HikariDataSource hikari && hikari.getHikariPoolMXBean() == null) { // not started yet
            Properties properties = hikari.getDataSourceProperties();
            normalizeKeys(properties);
            if (hikari.getJdbcUrl() != null) {
                hikari.setJdbcUrl(liftFromUrl(hikari.getJdbcUrl(), properties));
            }
            int socketSeconds = Integer.parseInt(String.valueOf(properties.getOrDefault("socketTimeout", "0")).strip());
            hikari.addDataSourceProperty("options", durable(abandonable(withBound(properties.getProperty("options"), socketSeconds),
                    MAIN_IDLE_IN_TRANSACTION_MILLIS)));
        }
        return bean;
    }
}
