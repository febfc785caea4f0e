package dev.offlinepreload.keycloak;

import org.keycloak.models.session.PersistentUserSessionModel;

/**
 * An OFFLINE_USER_SESSION row as the loader reads it, for {@code PersistentUserSessionAdapter}: what Keycloak's own
 * {@code ImmutablePersistentUserSessionEntity} is from 26.6 on, here for every supported minor. DATA is not kept here
 * ({@link SessionData} parses it for the whole batch). {@code rememberMe} is null where the column does not exist
 * (before 26.5, remember-me lives in DATA only).
 */
record ReadOnlyUserSession(String userSessionId, String realmId, String userId, int createOn, int lastSessionRefresh,
                           String brokerSessionId, Boolean rememberMe) implements PersistentUserSessionModel {

    @Override
    public String getUserSessionId() {
        return userSessionId;
    }

    @Override
    public int getStarted() {
        return createOn;
    }

    @Override
    public int getLastSessionRefresh() {
        return lastSessionRefresh;
    }

    @Override
    public boolean isOffline() {
        return true;
    }

    @Override
    public String getData() {
        return null;
    }

    @Override
    public boolean isRememberMe() {
        return rememberMe == Boolean.TRUE;
    }

    @Override
    public void setUserSessionId(String userSessionId) {
        throw readOnly();
    }

    @Override
    public void setStarted(int started) {
        throw readOnly();
    }

    @Override
    public void setLastSessionRefresh(int lastSessionRefresh) {
        throw readOnly();
    }

    @Override
    public void setOffline(boolean offline) {
        throw readOnly();
    }

    @Override
    public void setData(String data) {
        throw readOnly();
    }

    @Override
    public void setRealmId(String realmId) {
        throw readOnly();
    }

    @Override
    public void setUserId(String userId) {
        throw readOnly();
    }

    @Override
    public void setBrokerSessionId(String brokerSessionId) {
        throw readOnly();
    }

    @Override
    public void setRememberMe(boolean rememberMe) {
        throw readOnly();
    }

    static UnsupportedOperationException readOnly() {
        return new UnsupportedOperationException("a session row read by the offline session preloader is read-only");
    }
}
