package com.hospital.surveyinbox.config;

import java.util.TimeZone;
import org.apache.camel.Endpoint;
import org.apache.camel.component.quartz.QuartzEndpoint;
import org.apache.camel.spi.CamelEvent;
import org.apache.camel.spi.EventNotifier;
import org.apache.camel.support.EventNotifierSupport;
import org.quartz.CronScheduleBuilder;
import org.quartz.CronTrigger;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.quartz.Trigger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A Quartz route's {@code trigger.timeZone} reaches the clustered job store only when the trigger is first stored:
 * camel-quartz reschedules a stored trigger when its cron text changes, never its zone. So a change of
 * {@code adapter.legacy.zone} never took effect, and a pod of a release without the zone (or of the last one)
 * restarting during a rollout, after V16 had removed the trigger, stored it in UTC for every later release:
 * "daily 03:30" back at 12:30 in Seoul. When a route of {@code inbox-retention.camel.yaml} (or any Quartz route
 * with a cron and a zone) starts, its stored trigger is compared with the route's zone and, when they differ,
 * rescheduled with the same cron and job in the route's zone (Quartz's cluster lock orders two pods doing it at once;
 * both write the same trigger). The same for the route's misfire rule ({@code trigger.misfireInstruction}): retention
 * was stored with camel-quartz's "fire once now", so after an outage across 03:30 it ran as soon as a pod was back,
 * at peak hours; its route now says "do nothing" (the next 03:30), and triggers stored before are aligned.
 */
@Configuration
public class CronTriggerZones {

    private static final Logger LOG = LoggerFactory.getLogger(CronTriggerZones.class);

    @Bean
    static EventNotifier cronTriggerZoneOnRouteStart() {
        EventNotifierSupport notifier = new EventNotifierSupport() {
            @Override
            public boolean isEnabled(CamelEvent event) {
                return event instanceof CamelEvent.RouteStartedEvent;
            }

            @Override
            public void notify(CamelEvent event) throws SchedulerException {
                Endpoint endpoint = ((CamelEvent.RouteStartedEvent) event).getRoute().getEndpoint();
                if (endpoint instanceof QuartzEndpoint quartz) {
                    align(quartz);
                }
            }
        };
        notifier.setIgnoreExchangeEvents(true);
        notifier.setIgnoreServiceEvents(true);
        notifier.setIgnoreStepEvents(true);
        notifier.setIgnoreCamelContextEvents(true);
        return notifier;
    }

    /**
     * Reschedules the endpoint's stored cron trigger into the endpoint's zone and misfire rule, and from now when its
     * next fire lies past its schedule's ({@link #skipsAFire}); true when it had to.
     */
    static boolean align(QuartzEndpoint endpoint) throws SchedulerException {
        java.util.Map<String, Object> parameters = endpoint.getTriggerParameters() == null ? java.util.Map.of() : endpoint.getTriggerParameters();
        Object zone = parameters.get("timeZone");
        Object misfire = parameters.get("misfireInstruction");
        Scheduler scheduler = endpoint.getComponent().getScheduler();
        if (endpoint.getCron() == null || scheduler == null) {
            return false;
        }
        Trigger stored = scheduler.getTrigger(endpoint.getTriggerKey());
        if (!(stored instanceof CronTrigger cron)) {
            return false;
        }
        TimeZone wanted = zone == null ? cron.getTimeZone() : TimeZone.getTimeZone(zone.toString());
        Integer wantedMisfire = misfire == null ? null : Integer.valueOf(misfire.toString().strip());
        boolean misfireRight = wantedMisfire == null || cron.getMisfireInstruction() == wantedMisfire;
        // not a "do nothing" trigger (retention): a pod ahead only moves its next run to the next day's, never further,
        // and one behind would move a healthy daily run to its own 03:30, peak hours in real time
        int misfireRule = wantedMisfire == null ? cron.getMisfireInstruction() : wantedMisfire;
        boolean late = misfireRule != CronTrigger.MISFIRE_INSTRUCTION_DO_NOTHING && skipsAFire(cron, databaseNow(endpoint));
        if (cron.getTimeZone().getID().equals(wanted.getID()) && misfireRight && !late) {
            return false;
        }
        // camel-quartz's trigger: the stored cron, the zone and misfire rule the route says; starting now, not at the
        // stored start (days ago: its first fire time would lie in the past, a misfire that fires it at once), and
        // paused again if it was (rescheduling stores a trigger WAITING)
        CronScheduleBuilder schedule = ((CronScheduleBuilder) cron.getScheduleBuilder()).inTimeZone(wanted);
        if (!misfireRight) {
            schedule = switch (wantedMisfire) {
                case CronTrigger.MISFIRE_INSTRUCTION_DO_NOTHING -> schedule.withMisfireHandlingInstructionDoNothing();
                case CronTrigger.MISFIRE_INSTRUCTION_FIRE_ONCE_NOW -> schedule.withMisfireHandlingInstructionFireAndProceed();
                case Trigger.MISFIRE_INSTRUCTION_IGNORE_MISFIRE_POLICY -> schedule.withMisfireHandlingInstructionIgnoreMisfires();
                default -> throw new IllegalArgumentException("trigger.misfireInstruction " + wantedMisfire + " is not one of a cron trigger's");
            };
        }
        boolean paused = scheduler.getTriggerState(cron.getKey()) == Trigger.TriggerState.PAUSED;
        scheduler.rescheduleJob(cron.getKey(), cron.getTriggerBuilder().withSchedule(schedule).startNow().build());
        if (paused) {
            scheduler.pauseTrigger(cron.getKey());
        }
        LOG.warn("Quartz trigger {} (cron {}) was stored in zone {} with misfire rule {}{}: rescheduled in {} with {}", cron.getKey(),
                cron.getCronExpression(), cron.getTimeZone().getID(), cron.getMisfireInstruction(),
                late ? ", next fire at " + cron.getNextFireTime().toInstant() + " past its schedule's next" : "", wanted.getID(),
                misfireRule);
        return true;
    }

    /**
     * The database's clock, which every pod shares (a pod whose own clock is behind would take a healthy trigger for a
     * late one); this JVM's when the database does not answer.
     */
    private static java.util.Date databaseNow(QuartzEndpoint endpoint) {
        javax.sql.DataSource dataSource = endpoint.getCamelContext().getRegistry().findSingleByType(javax.sql.DataSource.class);
        if (dataSource != null) {
            try (java.sql.Connection connection = dataSource.getConnection();
                 java.sql.Statement statement = connection.createStatement();
                 java.sql.ResultSet now = statement.executeQuery("SELECT now()")) {
                if (now.next()) {
                    return new java.util.Date(now.getTimestamp(1).getTime());
                }
            } catch (java.sql.SQLException e) {
                LOG.warn("Quartz trigger check: the database's clock could not be read ({}); this JVM's is used",
                        e.getClass().getSimpleName());
            }
        }
        return new java.util.Date();
    }

    /**
     * Whether the stored trigger's next fire time lies past the one its schedule gives from now by more than a
     * minute: a pod whose clock ran ahead (started before NTP synced, a VM resumed) fired it, or took it as a misfire,
     * and stored its next fire from that clock; every other pod then waits for it (an hour ahead: no redelivery for an
     * hour, the silent-job alert firing, the trigger WAITING as if healthy). Rescheduled from now when a route starts;
     * {@code now} is the database's.
     */
    static boolean skipsAFire(CronTrigger cron, java.util.Date now) {
        java.util.Date next = cron.getNextFireTime();
        if (next == null) {
            return false;
        }
        try {
            // the schedule alone: the trigger's own fire-time-after starts from its start time, which may lie ahead too
            org.quartz.CronExpression schedule = new org.quartz.CronExpression(cron.getCronExpression());
            schedule.setTimeZone(cron.getTimeZone());
            java.util.Date due = schedule.getNextValidTimeAfter(now);
            return due != null && next.getTime() - due.getTime() > 60_000;
        } catch (java.text.ParseException e) {
            return false; // a stored expression Quartz itself parsed
        }
    }
}
