package com.hospital.surveyinbox.config;

import ch.qos.logback.classic.LoggerContext;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.stereotype.Component;

/**
 * Puts {@link RepeatedLogLines} (adapter.logging.repeat-limit per repeat-window) in front of Logback and reports its
 * drops: each window it writes the drops of the windows that ended, and counts every dropped line in
 * {@code adapter_log_lines_dropped_total{logger}}. It checks each window that the filter is still there (a
 * reconfiguration of Logback removes it) and puts it back.
 */
@Component
public class RepeatedLogLinesInstaller implements InitializingBean, DisposableBean {

    private final AdapterProperties properties;
    private final MeterRegistry meters;
    private RepeatedLogLines filter;
    private ScheduledExecutorService ticks;

    public RepeatedLogLinesInstaller(AdapterProperties properties, MeterRegistry meters) {
        this.properties = properties;
        this.meters = meters;
    }

    @Override
    public void afterPropertiesSet() {
        AdapterProperties.Logging logging = properties.getLogging();
        if (logging.getRepeatLimit() == 0 || !(LoggerFactory.getILoggerFactory() instanceof LoggerContext)) {
            return;
        }
        // one counter per logger, looked up once: in a storm every dropped line counts
        java.util.Map<String, Counter> dropped = new java.util.concurrent.ConcurrentHashMap<>();
        filter = new RepeatedLogLines(logging.getRepeatLimit(), logging.getRepeatWindow().toNanos(), System::nanoTime,
                logger -> dropped.computeIfAbsent(logger, name -> Counter.builder("adapter.log.lines.dropped")
                        .description("log lines dropped as repeats beyond adapter.logging.repeat-limit per window")
                        .tag("logger", name).register(meters)).increment());
        filter.start();
        installed();
        ticks = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "repeated-log-lines");
            t.setDaemon(true);
            return t;
        });
        long every = Math.max(1, logging.getRepeatWindow().toMillis());
        ticks.scheduleWithFixedDelay(() -> {
            try {
                installed();
                filter.flush();
            } catch (RuntimeException e) {
                // a failed tick must not end the ticks (a scheduled task that throws is never run again)
                LoggerFactory.getLogger(RepeatedLogLinesInstaller.class).warn("Repeated log lines: a tick failed ({})", e.toString());
            }
        }, every, every, TimeUnit.MILLISECONDS);
    }

    /** The filter this service put in front of Logback, there now (put back if a reconfiguration removed it). */
    public RepeatedLogLines installed() {
        if (filter == null) {
            return null;
        }
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        synchronized (context.getTurboFilterList()) {
            // one per JVM: another context of the same JVM (a test's) may have put its own; it serves the same purpose
            if (context.getTurboFilterList().stream().noneMatch(RepeatedLogLines.class::isInstance)) {
                context.addTurboFilter(filter);
            }
        }
        return filter;
    }

    @Override
    public void destroy() {
        if (ticks != null) {
            ticks.shutdownNow();
        }
        if (filter != null) {
            filter.flush();
            ((LoggerContext) LoggerFactory.getILoggerFactory()).getTurboFilterList().remove(filter);
            filter.stop();
        }
    }
}
